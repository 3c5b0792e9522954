// textDocument/completion and textDocument/inlineCompletion: from an LSP
// position to a completion_call of the core, and from its completion_answer
// back to a CompletionList / InlineCompletionList.
//
// place_of() turns a request's document and position into the core's
// request_place: the document's snapshot (shared, not copied) and the cursor
// as a UTF-8 byte column; candidate ranges come back in that snapshot and
// are converted with it. The policy (deadlines, stats, the check that the
// document did not change meanwhile, which fails ContentModified) is the
// core's (server/core/server_core_requests.cpp); failures map to LSP errors
// in lsp_errors.h: an unknown document is InvalidParams, a stale or untracked
// one RequestFailed with the reason.
#include <spdlog/spdlog.h>

#include "text/lines.h"
#include "text/utf8.h"
#include "server/binding/lsp_errors.h"
#include "server/binding/lsp_server.h"

namespace qf::server {

namespace json = boost::json;

namespace {

// A label for a candidate that has none: its first line, shortened at a
// character boundary.
std::string first_line(const std::string& s) {
  const text::line_break nl = text::find_line_break(s);
  return text::utf8_shorten(std::string_view(s).substr(0, nl.pos), 80);
}

// Each item's `data` carries its confidence score (mean token log-probability).
void add_item_data(json::value& list, const completion_result& result) {
  json::array& items = list.as_object()["items"].as_array();
  for (std::size_t i = 0; i < items.size() && i < result.items.size(); ++i)
    if (result.items[i].score) items[i].as_object()["data"] = json::object{{"score", *result.items[i].score}};
}

}  // namespace

lsp::position lsp_server::to_lsp(const index::document& doc, const text_pos& p) const {
  const std::size_t line = text::clamp_line(doc.lines, static_cast<std::size_t>(std::max<int64_t>(0, p.line)));
  const std::size_t ch = text::character_of(doc.text, doc.lines, line,
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

std::optional<request_place> lsp_server::place_of(const std::string& uri, const lsp::position& pos,
                                                  const lsp::reply_once& reply) const {
  outcome<index::document_store::snapshot> found = core_.request_document(uri);
  if (auto* f = std::get_if<request_failure>(&found)) {
    if (f->what == request_failure::kind::not_open) f->message = "params.textDocument.uri: " + f->message;
    reply_failure(reply, *f);
    return std::nullopt;
  }
  request_place at;
  at.doc = std::get<index::document_store::snapshot>(std::move(found));
  const index::document& doc = *at.doc;
  // Cursor: a line past the end clamps to the end of the document, a
  // character past the end of its line to the line's end.
  std::size_t line = pos.line;
  std::size_t byte_col = 0;
  if (line >= doc.lines.line_count()) {
    line = doc.lines.line_count() - 1;
    byte_col = doc.lines.line_end(line) - doc.lines.line_start(line);
  } else {
    byte_col = *text::offset_of(doc.text, doc.lines, line, pos.character, encoding_) - doc.lines.line_start(line);
  }
  at.cursor = text_pos{static_cast<int64_t>(line), static_cast<int64_t>(byte_col)};
  return at;
}

void lsp_server::start_completion(const std::string& uri, const lsp::position& pos, bool explicit_trigger,
                                  bool inline_request, const lsp::reply_once& reply) {
  completion_call call;
  call.received = clock::now();
  std::optional<request_place> at = place_of(uri, pos, reply);
  if (!at) return;
  call.key = lsp::id_to_string(reply.id());
  call.at = std::move(*at);
  call.explicit_trigger = explicit_trigger;
  call.inline_request = inline_request;
  core_.request_completion(std::move(call), [this, reply, inline_request](outcome<completion_answer> o) {
    if (const auto* f = std::get_if<request_failure>(&o)) return reply_failure(reply, *f);
    const completion_answer& a = std::get<completion_answer>(o);
    if (a.failed) log_message(lsp::message_type::warning, "completion failed: " + *a.failed);
    reply.result(build_reply(*a.doc, a.result, inline_request));
  });
}

}  // namespace qf::server
