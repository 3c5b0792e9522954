// textDocument/completion and textDocument/inlineCompletion: from an LSP
// position to a completion_request on the worker, and from the provider's
// candidates back to a CompletionList / InlineCompletionList.
//
// The request holds the store's snapshot of the document (shared, not
// copied); candidate ranges (UTF-8 byte columns in that snapshot) are
// converted back with the same snapshot. A stale or untracked document gets
// RequestFailed (-32803) with the reason, an unknown one InvalidParams. A
// result that arrives after its document changed is answered with
// ContentModified, never with edits for text the client no longer has.
#include <spdlog/spdlog.h>

#include "indexing/lines.h"
#include "indexing/utf8.h"
#include "server/binding/lsp_server.h"

namespace qf::server {

namespace json = boost::json;
using lsp::error_code;

namespace {

// A label for a candidate that has none: its first line, shortened at a
// character boundary.
std::string first_line(const std::string& s) {
  const index::line_break nl = index::find_line_break(s);
  return index::utf8_shorten(std::string_view(s).substr(0, nl.pos), 80);
}

// Each item's `data` carries its confidence score (mean token log-probability).
void add_item_data(json::value& list, const completion_result& result) {
  json::array& items = list.as_object()["items"].as_array();
  for (std::size_t i = 0; i < items.size() && i < result.items.size(); ++i)
    if (result.items[i].score) items[i].as_object()["data"] = json::object{{"score", *result.items[i].score}};
}

}  // namespace

lsp::position lsp_server::to_lsp(const index::document& doc, const text_pos& p) const {
  const std::size_t line = index::clamp_line(doc.lines, static_cast<std::size_t>(std::max<int64_t>(0, p.line)));
  const std::size_t ch = index::character_of(doc.text, doc.lines, line,
                                             static_cast<std::size_t>(std::max<int64_t>(0, p.byte_col)), encoding_);
  return lsp::position{static_cast<std::uint32_t>(line), static_cast<std::uint32_t>(ch)};
}

json::value lsp_server::build_reply(const index::document& doc, const completion_result& result,
                                    bool inline_request) const {
  if (inline_request) {
    lsp::inline_completion_list list;
    for (const auto& c : result.items) {
      lsp::inline_completion_item item;
      item.insertText = c.insert_text;
      item.range = lsp::range{to_lsp(doc, c.replace_begin), to_lsp(doc, c.replace_end)};
      if (!c.filter_text.empty()) item.filterText = c.filter_text;
      list.items.push_back(std::move(item));
    }
    json::value v = json::value_from(list);
    add_item_data(v, result);
    return v;
  }
  lsp::completion_list list;
  list.isIncomplete = result.incomplete;
  for (std::size_t i = 0; i < result.items.size(); ++i) {
    const auto& c = result.items[i];
    lsp::completion_item item;
    item.label = c.label.empty() ? first_line(c.insert_text) : c.label;
    item.kind = 1;  // Text
    item.detail = "quickfill";
    char sort[24];  // any size_t
    std::snprintf(sort, sizeof sort, "%04zu", i);
    item.sortText = sort;
    item.filterText = c.filter_text.empty() ? c.insert_text : c.filter_text;
    item.insertTextFormat = 1;
    item.textEdit = lsp::text_edit{lsp::range{to_lsp(doc, c.replace_begin), to_lsp(doc, c.replace_end)}, c.insert_text};
    list.items.push_back(std::move(item));
  }
  json::value v = json::value_from(list);
  add_item_data(v, result);
  return v;
}

completion_request lsp_server::make_request(const std::string& uri, const lsp::position& pos,
                                            index::document_store::snapshot& doc_out) {
  const index::document_store::lookup_result found = core_.documents().lookup(uri);
  switch (found.state) {
    case index::doc_state::open: break;
    case index::doc_state::not_open:
      throw lsp::rpc_error(error_code::invalid_params, "params.textDocument.uri: document is not open: " + uri);
    case index::doc_state::stale:
      throw lsp::rpc_error(error_code::request_failed,
                           "document is out of sync with the editor: " + uri + " (" + found.reason +
                               "); reopen it or send its full text");
    case index::doc_state::not_tracked:
      throw lsp::rpc_error(error_code::request_failed,
                           "document is not tracked: " + uri + " (" + found.reason + "); close it and open it again");
  }
  const index::document_store::snapshot doc = found.doc;
  doc_out = doc;

  // Cursor: a line past the end clamps to the end of the document, a
  // character past the end of its line to the line's end.
  std::size_t line = pos.line;
  std::size_t byte_col = 0;
  if (line >= doc->lines.line_count()) {
    line = doc->lines.line_count() - 1;
    byte_col = doc->lines.line_end(line) - doc->lines.line_start(line);
  } else {
    byte_col = *index::offset_of(doc->text, doc->lines, line, pos.character, encoding_) - doc->lines.line_start(line);
  }

  completion_request req;
  req.uri = uri;
  req.version = doc->version;
  req.language_id = doc->language_id;
  req.text = index::shared_text(doc);  // shared with the store, not copied
  req.cursor = text_pos{static_cast<int64_t>(line), static_cast<int64_t>(byte_col)};
  core_.add_context(req);
  return req;
}

void lsp_server::start_completion(const std::string& uri, const lsp::position& pos, bool explicit_trigger,
                                  bool inline_request, const lsp::reply_once& reply) {
  const clock::time_point received = clock::now();
  index::document_store::snapshot doc;
  completion_request req = make_request(uri, pos, doc);
  const server_settings s = core_.settings();
  req.explicit_trigger = explicit_trigger;
  req.inline_request = inline_request;
  req.received = received;
  req.deadline = received + std::chrono::milliseconds(explicit_trigger ? s.explicit_deadline_ms : s.auto_deadline_ms);

  request_record base;
  base.uri = uri;
  base.version = doc->version;
  base.inline_request = inline_request;
  base.explicit_trigger = explicit_trigger;
  base.slo_budget_ms = s.slo_budget_ms;

  auto on_cancel = [this, reply, base, received](cancel_reason why) {
    if (reply.replied()) return;
    reply.error(static_cast<error_code>(cancel_error_code(why)), cancel_message(why));
    request_record r = base;
    r.outcome = request_outcome::cancelled;
    r.reason = why;
    r.wall_ms = std::chrono::duration<double, std::milli>(clock::now() - received).count();
    core_.stats().record(r);
  };
  auto done = [this, reply, base, received, doc, inline_request, on_cancel, pos](server_core::completion_outcome out) {
    if (reply.replied()) return;
    if (core_.documents().get(base.uri) != doc) {
      // The document changed (or closed) between the worker finishing and now.
      on_cancel(cancel_reason::content_modified);
      return;
    }
    request_record r = base;
    r.wall_ms = std::chrono::duration<double, std::milli>(clock::now() - received).count();
    if (out.no_model || out.failed) {
      r.outcome = out.failed ? request_outcome::failed : request_outcome::no_model;
      if (out.failed) log_message(lsp::message_type::warning, "completion failed: " + out.error);
      reply.result(inline_request ? json::value(json::object{{"items", json::array{}}})
                                  : json::value(json::object{{"isIncomplete", false}, {"items", json::array{}}}));
    } else {
      r.outcome = request_outcome::answered;
      r.items = out.result.items.size();
      r.metrics = out.result.metrics;
      json::value list = build_reply(*doc, out.result, inline_request);
      if (inline_request) add_cached_next_edits(base.uri, doc, pos, list);
      reply.result(std::move(list));
    }
    core_.stats().record(r);
  };
  core_.complete(lsp::id_to_string(reply.id()), std::move(req), std::move(done), std::move(on_cancel));
}

}  // namespace qf::server
