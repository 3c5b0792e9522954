// quickfill/nextEdit and the acceptance reports quickfill/didShow and
// quickfill/didAccept (docs/protocol.md).
//
// quickfill/nextEdit runs on the inference worker like a completion: latest
// request wins per document, any completion request cancels it (-32800: a
// completion never waits behind a next edit), an edit of the document cancels it (-32801),
// $/cancelRequest cancels it (-32800). A `version` in the params that is not
// the document's is answered -32801 at once. The result lists minimal edits
// with ranges in the negotiated encoding, in document order, and an id for the
// acceptance reports; no edits (with a reason) means silence. The prediction
// is kept with the snapshot it was made on: an inline completion on that
// snapshot also offers the edits that start on the cursor's line, as items
// whose range replaces the text they change.
#include <spdlog/spdlog.h>

#include "indexing/lines.h"
#include "lsp/protocol_next_edit.h"
#include "server/binding/lsp_server.h"

namespace qf::server {

namespace json = boost::json;
using lsp::error_code;

void lsp_server::register_next_edit_handlers() {
  rpc_.on_request<lsp::next_edit_params>(
      "quickfill/nextEdit", [this](const lsp::next_edit_params& p, const lsp::reply_once& reply) {
        const clock::time_point received = clock::now();
        index::document_store::snapshot doc;
        completion_request creq = make_request(p.textDocument.uri, p.position, doc);
        if (p.textDocument.version && *p.textDocument.version != doc->version)
          throw lsp::rpc_error(error_code::content_modified,
                               "params.textDocument.version: the document is at version " +
                                   std::to_string(doc->version) + ", not " + std::to_string(*p.textDocument.version));
        next_edit_request req;
        req.uri = creq.uri;
        req.version = creq.version;
        req.language_id = creq.language_id;
        req.text = creq.text;
        req.cursor = next_edit_pos{creq.cursor.line, creq.cursor.byte_col};
        req.received = received;
        req.deadline = received + std::chrono::milliseconds(core_.settings().explicit_deadline_ms);
        for (auto& d : creq.context_docs) req.context_docs.push_back({d.uri, d.text});
        req.edits = creq.edits;
        const std::string uri = req.uri;
        auto on_cancel = [reply](cancel_reason why) {
          if (reply.replied()) return;
          // Preempted: by a newer next edit of the document or by any completion request.
          reply.error(static_cast<error_code>(cancel_error_code(why)),
                      why == cancel_reason::preempted ? "superseded by a newer request (a completion request or a "
                                                        "newer next edit of the document)"
                                                      : cancel_message(why));
        };
        auto done = [this, reply, doc, uri](next_edit_result r, bool no_model) {
          if (reply.replied()) return;
          if (core_.documents().get(uri) != doc) {
            reply.error(error_code::content_modified, cancel_message(cancel_reason::content_modified));
            return;
          }
          lsp::next_edit_list list;
          list.id = "next-edit-" + std::to_string(++next_edit_ids_);
          list.version = static_cast<std::int32_t>(doc->version);
          list.format = r.format;
          for (const next_edit_edit& e : r.edits)
            list.edits.push_back(lsp::next_edit_item{
                lsp::range{to_lsp(*doc, text_pos{e.begin.line, e.begin.byte_col}),
                           to_lsp(*doc, text_pos{e.end.line, e.end.byte_col})},
                e.new_text, e.at_cursor});
          if (no_model) list.reason = "no model is loaded";
          else if (list.edits.empty()) list.reason = r.reason;
          std::erase_if(next_edits_, [&](const auto& kv) { return core_.documents().get(kv.first) != kv.second.doc; });
          next_edits_[uri] = cached_next_edit{doc, std::move(r.edits)};
          reply.result(json::value_from(list));
        };
        core_.next_edit(lsp::id_to_string(reply.id()), std::move(req), std::move(done), std::move(on_cancel));
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

void lsp_server::add_cached_next_edits(const std::string& uri, const index::document_store::snapshot& doc,
                                       const lsp::position& pos, json::value& reply) {
  auto it = next_edits_.find(uri);
  if (it == next_edits_.end()) return;
  if (it->second.doc != doc) {
    next_edits_.erase(it);
    return;
  }
  const index::document& d = *doc;
  const std::size_t line = std::min<std::size_t>(pos.line, d.lines.line_count() - 1);
  const std::size_t cursor = pos.line >= d.lines.line_count()
                                 ? d.text.size()
                                 : index::offset_of(d.text, d.lines, line, pos.character, encoding_).value_or(d.lines.line_end(line));
  json::array& items = reply.as_object()["items"].as_array();
  for (const next_edit_edit& e : it->second.edits) {
    if (e.begin.line != static_cast<int64_t>(line)) continue;
    const std::size_t b = d.lines.line_start(e.begin.line) + static_cast<std::size_t>(e.begin.byte_col);
    const std::size_t en = d.lines.line_start(e.end.line) + static_cast<std::size_t>(e.end.byte_col);
    // The range must hold the cursor: widen it to the cursor with the text in between.
    const std::size_t rb = std::min(b, cursor), re = std::max(en, cursor);
    std::string text = d.text.substr(rb, b - rb) + e.new_text + d.text.substr(en, re - en);
    const index::line_col lb = index::line_col_of_offset(d.text, rb), le = index::line_col_of_offset(d.text, re);
    lsp::inline_completion_item item;
    item.insertText = std::move(text);
    item.range = lsp::range{to_lsp(d, text_pos{lb.line, lb.col}), to_lsp(d, text_pos{le.line, le.col})};
    items.push_back(json::value_from(item));
  }
}

}  // namespace qf::server
