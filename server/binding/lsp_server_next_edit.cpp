// quickfill/nextEdit and the acceptance reports quickfill/didShow and
// quickfill/didAccept (docs/protocol.md).
//
// quickfill/nextEdit runs on the inference worker like a completion
// (server_core::request_next_edit): latest request wins per document, any
// completion request cancels it (-32800: a completion never waits behind a
// next edit), an edit of the document cancels it (-32801), $/cancelRequest
// cancels it (-32800). A `version` in the params that is not the document's
// is answered -32801 at once. The result lists minimal edits with ranges in
// the negotiated encoding, in document order, and an id for the acceptance
// reports; no edits (with a reason) means silence. The core keeps the
// prediction with the snapshot it was made on: an inline completion on that
// snapshot also offers the edits that start on the cursor's line.
#include <spdlog/spdlog.h>

#include "lsp/protocol_next_edit.h"
#include "server/binding/lsp_errors.h"
#include "server/binding/lsp_server.h"

namespace qf::server {

namespace json = boost::json;
using lsp::error_code;

void lsp_server::register_next_edit_handlers() {
  rpc_.on_request<lsp::next_edit_params>(
      "quickfill/nextEdit", [this](const lsp::next_edit_params& p, const lsp::reply_once& reply) {
        next_edit_call call;
        call.received = clock::now();
        std::optional<request_place> at = place_of(p.textDocument.uri, p.position, reply);
        if (!at) return;
        const std::int64_t version = at->doc->version;
        if (p.textDocument.version && *p.textDocument.version != version)
          throw lsp::rpc_error(error_code::content_modified,
                               "params.textDocument.version: the document is at version " + std::to_string(version) +
                                   ", not " + std::to_string(*p.textDocument.version));
        call.key = lsp::id_to_string(reply.id());
        call.at = std::move(*at);
        core_.request_next_edit(std::move(call), [this, reply](outcome<next_edit_answer> o) {
          if (const auto* f = std::get_if<request_failure>(&o)) return reply_failure(reply, *f);
          const next_edit_answer& a = std::get<next_edit_answer>(o);
          lsp::next_edit_list list;
          list.id = a.id;
          list.version = static_cast<std::int32_t>(a.doc->version);
          list.format = a.result.format;
          for (const next_edit_edit& e : a.result.edits)
            list.edits.push_back(lsp::next_edit_item{
                lsp::range{to_lsp(*a.doc, text_pos{e.begin.line, e.begin.byte_col}),
                           to_lsp(*a.doc, text_pos{e.end.line, e.end.byte_col})},
                e.new_text, e.at_cursor});
          list.reason = a.reason;
          reply.result(json::value_from(list));
        });
      });
  rpc_.on_notification<lsp::did_show_params>("quickfill/didShow", [this](const lsp::did_show_params& p) {
    std::string why;
    if (!core_.acceptance().shown(p.id, p.source, p.trigger.value_or("automatic"), p.length, &why))
      throw lsp::rpc_error(error_code::invalid_params, why);
  });
  rpc_.on_notification<lsp::did_accept_params>("quickfill/didAccept", [this](const lsp::did_accept_params& p) {
    core_.acceptance().accepted(p.id, p.acceptedLength);
  });
}

}  // namespace qf::server
