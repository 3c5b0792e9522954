// Boost.JSON conversions for the protocol structs (see protocol.h). Each pair
// lists the members once for reading and once for writing; the member name is
// the JSON key.
#include "lsp/protocol.h"

namespace qf::lsp {

position tag_invoke(json::value_to_tag<position>, const json::value& v) {
  const json::object& o = expect_object(v);
  position x{};
  read_field(o, "line", x.line);
  read_field(o, "character", x.character);
  return x;
}

void tag_invoke(json::value_from_tag, json::value& v, const position& x) {
  json::object o;
  write_field(o, "line", x.line);
  write_field(o, "character", x.character);
  v = std::move(o);
}

range tag_invoke(json::value_to_tag<range>, const json::value& v) {
  const json::object& o = expect_object(v);
  range x{};
  read_field(o, "start", x.start);
  read_field(o, "end", x.end);
  return x;
}

void tag_invoke(json::value_from_tag, json::value& v, const range& x) {
  json::object o;
  write_field(o, "start", x.start);
  write_field(o, "end", x.end);
  v = std::move(o);
}

text_document_identifier tag_invoke(json::value_to_tag<text_document_identifier>, const json::value& v) {
  const json::object& o = expect_object(v);
  text_document_identifier x{};
  read_field(o, "uri", x.uri);
  return x;
}

void tag_invoke(json::value_from_tag, json::value& v, const text_document_identifier& x) {
  json::object o;
  write_field(o, "uri", x.uri);
  v = std::move(o);
}

versioned_text_document_identifier tag_invoke(json::value_to_tag<versioned_text_document_identifier>, const json::value& v) {
  const json::object& o = expect_object(v);
  versioned_text_document_identifier x{};
  read_field(o, "uri", x.uri);
  read_field(o, "version", x.version);
  return x;
}

void tag_invoke(json::value_from_tag, json::value& v, const versioned_text_document_identifier& x) {
  json::object o;
  write_field(o, "uri", x.uri);
  write_field(o, "version", x.version);
  v = std::move(o);
}

text_document_item tag_invoke(json::value_to_tag<text_document_item>, const json::value& v) {
  const json::object& o = expect_object(v);
  text_document_item x{};
  read_field(o, "uri", x.uri);
  read_field(o, "languageId", x.languageId);
  read_field(o, "version", x.version);
  read_field(o, "text", x.text);
  return x;
}

void tag_invoke(json::value_from_tag, json::value& v, const text_document_item& x) {
  json::object o;
  write_field(o, "uri", x.uri);
  write_field(o, "languageId", x.languageId);
  write_field(o, "version", x.version);
  write_field(o, "text", x.text);
  v = std::move(o);
}

text_document_content_change_event tag_invoke(json::value_to_tag<text_document_content_change_event>, const json::value& v) {
  const json::object& o = expect_object(v);
  text_document_content_change_event x{};
  read_field(o, "range", x.range);
  read_field(o, "rangeLength", x.rangeLength);
  read_field(o, "text", x.text);
  return x;
}

void tag_invoke(json::value_from_tag, json::value& v, const text_document_content_change_event& x) {
  json::object o;
  write_field(o, "range", x.range);
  write_field(o, "rangeLength", x.rangeLength);
  write_field(o, "text", x.text);
  v = std::move(o);
}

did_open_text_document_params tag_invoke(json::value_to_tag<did_open_text_document_params>, const json::value& v) {
  const json::object& o = expect_object(v);
  did_open_text_document_params x{};
  read_field(o, "textDocument", x.textDocument);
  return x;
}

void tag_invoke(json::value_from_tag, json::value& v, const did_open_text_document_params& x) {
  json::object o;
  write_field(o, "textDocument", x.textDocument);
  v = std::move(o);
}

did_change_text_document_params tag_invoke(json::value_to_tag<did_change_text_document_params>, const json::value& v) {
  const json::object& o = expect_object(v);
  did_change_text_document_params x{};
  read_field(o, "textDocument", x.textDocument);
  read_field(o, "contentChanges", x.contentChanges);
  return x;
}

void tag_invoke(json::value_from_tag, json::value& v, const did_change_text_document_params& x) {
  json::object o;
  write_field(o, "textDocument", x.textDocument);
  write_field(o, "contentChanges", x.contentChanges);
  v = std::move(o);
}

did_close_text_document_params tag_invoke(json::value_to_tag<did_close_text_document_params>, const json::value& v) {
  const json::object& o = expect_object(v);
  did_close_text_document_params x{};
  read_field(o, "textDocument", x.textDocument);
  return x;
}

void tag_invoke(json::value_from_tag, json::value& v, const did_close_text_document_params& x) {
  json::object o;
  write_field(o, "textDocument", x.textDocument);
  v = std::move(o);
}

did_save_text_document_params tag_invoke(json::value_to_tag<did_save_text_document_params>, const json::value& v) {
  const json::object& o = expect_object(v);
  did_save_text_document_params x{};
  read_field(o, "textDocument", x.textDocument);
  read_field(o, "text", x.text);
  return x;
}

void tag_invoke(json::value_from_tag, json::value& v, const did_save_text_document_params& x) {
  json::object o;
  write_field(o, "textDocument", x.textDocument);
  write_field(o, "text", x.text);
  v = std::move(o);
}

completion_context tag_invoke(json::value_to_tag<completion_context>, const json::value& v) {
  const json::object& o = expect_object(v);
  completion_context x{};
  read_field(o, "triggerKind", x.triggerKind);
  read_field(o, "triggerCharacter", x.triggerCharacter);
  return x;
}

void tag_invoke(json::value_from_tag, json::value& v, const completion_context& x) {
  json::object o;
  write_field(o, "triggerKind", x.triggerKind);
  write_field(o, "triggerCharacter", x.triggerCharacter);
  v = std::move(o);
}

completion_params tag_invoke(json::value_to_tag<completion_params>, const json::value& v) {
  const json::object& o = expect_object(v);
  completion_params x{};
  read_field(o, "textDocument", x.textDocument);
  read_field(o, "position", x.position);
  read_field(o, "context", x.context);
  return x;
}

void tag_invoke(json::value_from_tag, json::value& v, const completion_params& x) {
  json::object o;
  write_field(o, "textDocument", x.textDocument);
  write_field(o, "position", x.position);
  write_field(o, "context", x.context);
  v = std::move(o);
}

inline_completion_context tag_invoke(json::value_to_tag<inline_completion_context>, const json::value& v) {
  const json::object& o = expect_object(v);
  inline_completion_context x{};
  read_field(o, "triggerKind", x.triggerKind);
  read_field(o, "selectedCompletionInfo", x.selectedCompletionInfo);
  return x;
}

void tag_invoke(json::value_from_tag, json::value& v, const inline_completion_context& x) {
  json::object o;
  write_field(o, "triggerKind", x.triggerKind);
  write_field(o, "selectedCompletionInfo", x.selectedCompletionInfo);
  v = std::move(o);
}

inline_completion_params tag_invoke(json::value_to_tag<inline_completion_params>, const json::value& v) {
  const json::object& o = expect_object(v);
  inline_completion_params x{};
  read_field(o, "textDocument", x.textDocument);
  read_field(o, "position", x.position);
  read_field(o, "context", x.context);
  return x;
}

void tag_invoke(json::value_from_tag, json::value& v, const inline_completion_params& x) {
  json::object o;
  write_field(o, "textDocument", x.textDocument);
  write_field(o, "position", x.position);
  write_field(o, "context", x.context);
  v = std::move(o);
}

text_edit tag_invoke(json::value_to_tag<text_edit>, const json::value& v) {
  const json::object& o = expect_object(v);
  text_edit x{};
  read_field(o, "range", x.range);
  read_field(o, "newText", x.newText);
  return x;
}

void tag_invoke(json::value_from_tag, json::value& v, const text_edit& x) {
  json::object o;
  write_field(o, "range", x.range);
  write_field(o, "newText", x.newText);
  v = std::move(o);
}

completion_item tag_invoke(json::value_to_tag<completion_item>, const json::value& v) {
  const json::object& o = expect_object(v);
  completion_item x{};
  read_field(o, "label", x.label);
  read_field(o, "kind", x.kind);
  read_field(o, "detail", x.detail);
  read_field(o, "sortText", x.sortText);
  read_field(o, "filterText", x.filterText);
  read_field(o, "insertTextFormat", x.insertTextFormat);
  read_field(o, "textEdit", x.textEdit);
  return x;
}

void tag_invoke(json::value_from_tag, json::value& v, const completion_item& x) {
  json::object o;
  write_field(o, "label", x.label);
  write_field(o, "kind", x.kind);
  write_field(o, "detail", x.detail);
  write_field(o, "sortText", x.sortText);
  write_field(o, "filterText", x.filterText);
  write_field(o, "insertTextFormat", x.insertTextFormat);
  write_field(o, "textEdit", x.textEdit);
  v = std::move(o);
}

completion_list tag_invoke(json::value_to_tag<completion_list>, const json::value& v) {
  const json::object& o = expect_object(v);
  completion_list x{};
  read_field(o, "isIncomplete", x.isIncomplete);
  read_field(o, "items", x.items);
  return x;
}

void tag_invoke(json::value_from_tag, json::value& v, const completion_list& x) {
  json::object o;
  write_field(o, "isIncomplete", x.isIncomplete);
  write_field(o, "items", x.items);
  v = std::move(o);
}

inline_completion_item tag_invoke(json::value_to_tag<inline_completion_item>, const json::value& v) {
  const json::object& o = expect_object(v);
  inline_completion_item x{};
  read_field(o, "insertText", x.insertText);
  read_field(o, "filterText", x.filterText);
  read_field(o, "range", x.range);
  return x;
}

void tag_invoke(json::value_from_tag, json::value& v, const inline_completion_item& x) {
  json::object o;
  write_field(o, "insertText", x.insertText);
  write_field(o, "filterText", x.filterText);
  write_field(o, "range", x.range);
  v = std::move(o);
}

inline_completion_list tag_invoke(json::value_to_tag<inline_completion_list>, const json::value& v) {
  const json::object& o = expect_object(v);
  inline_completion_list x{};
  read_field(o, "items", x.items);
  return x;
}

void tag_invoke(json::value_from_tag, json::value& v, const inline_completion_list& x) {
  json::object o;
  write_field(o, "items", x.items);
  v = std::move(o);
}

initialize_params tag_invoke(json::value_to_tag<initialize_params>, const json::value& v) {
  const json::object& o = expect_object(v);
  initialize_params x{};
  read_field(o, "processId", x.processId);
  read_field(o, "rootUri", x.rootUri);
  read_field(o, "rootPath", x.rootPath);
  read_field(o, "workspaceFolders", x.workspaceFolders);
  read_field(o, "capabilities", x.capabilities);
  read_field(o, "initializationOptions", x.initializationOptions);
  read_field(o, "trace", x.trace);
  return x;
}

void tag_invoke(json::value_from_tag, json::value& v, const initialize_params& x) {
  json::object o;
  write_field(o, "processId", x.processId);
  write_field(o, "rootUri", x.rootUri);
  write_field(o, "rootPath", x.rootPath);
  write_field(o, "workspaceFolders", x.workspaceFolders);
  write_field(o, "capabilities", x.capabilities);
  write_field(o, "initializationOptions", x.initializationOptions);
  write_field(o, "trace", x.trace);
  v = std::move(o);
}

did_change_configuration_params tag_invoke(json::value_to_tag<did_change_configuration_params>, const json::value& v) {
  const json::object& o = expect_object(v);
  did_change_configuration_params x{};
  read_field(o, "settings", x.settings);
  return x;
}

void tag_invoke(json::value_from_tag, json::value& v, const did_change_configuration_params& x) {
  json::object o;
  write_field(o, "settings", x.settings);
  v = std::move(o);
}

set_trace_params tag_invoke(json::value_to_tag<set_trace_params>, const json::value& v) {
  const json::object& o = expect_object(v);
  set_trace_params x{};
  read_field(o, "value", x.value);
  return x;
}

void tag_invoke(json::value_from_tag, json::value& v, const set_trace_params& x) {
  json::object o;
  write_field(o, "value", x.value);
  v = std::move(o);
}

show_message_params tag_invoke(json::value_to_tag<show_message_params>, const json::value& v) {
  const json::object& o = expect_object(v);
  show_message_params x{};
  read_field(o, "type", x.type);
  read_field(o, "message", x.message);
  return x;
}

void tag_invoke(json::value_from_tag, json::value& v, const show_message_params& x) {
  json::object o;
  write_field(o, "type", x.type);
  write_field(o, "message", x.message);
  v = std::move(o);
}

log_message_params tag_invoke(json::value_to_tag<log_message_params>, const json::value& v) {
  const json::object& o = expect_object(v);
  log_message_params x{};
  read_field(o, "type", x.type);
  read_field(o, "message", x.message);
  return x;
}

void tag_invoke(json::value_from_tag, json::value& v, const log_message_params& x) {
  json::object o;
  write_field(o, "type", x.type);
  write_field(o, "message", x.message);
  v = std::move(o);
}

work_done_progress_create_params tag_invoke(json::value_to_tag<work_done_progress_create_params>, const json::value& v) {
  const json::object& o = expect_object(v);
  work_done_progress_create_params x{};
  read_field(o, "token", x.token);
  return x;
}

void tag_invoke(json::value_from_tag, json::value& v, const work_done_progress_create_params& x) {
  json::object o;
  write_field(o, "token", x.token);
  v = std::move(o);
}

work_done_progress tag_invoke(json::value_to_tag<work_done_progress>, const json::value& v) {
  const json::object& o = expect_object(v);
  work_done_progress x{};
  read_field(o, "kind", x.kind);
  read_field(o, "title", x.title);
  read_field(o, "message", x.message);
  read_field(o, "percentage", x.percentage);
  return x;
}

void tag_invoke(json::value_from_tag, json::value& v, const work_done_progress& x) {
  json::object o;
  write_field(o, "kind", x.kind);
  write_field(o, "title", x.title);
  write_field(o, "message", x.message);
  write_field(o, "percentage", x.percentage);
  v = std::move(o);
}

progress_params tag_invoke(json::value_to_tag<progress_params>, const json::value& v) {
  const json::object& o = expect_object(v);
  progress_params x{};
  read_field(o, "token", x.token);
  read_field(o, "value", x.value);
  return x;
}

void tag_invoke(json::value_from_tag, json::value& v, const progress_params& x) {
  json::object o;
  write_field(o, "token", x.token);
  write_field(o, "value", x.value);
  v = std::move(o);
}

// $/cancelRequest ids are integers or strings.
cancel_params tag_invoke(json::value_to_tag<cancel_params>, const json::value& v) {
  const json::object& o = expect_object(v);
  cancel_params x{};
  read_field(o, "id", x.id);
  if (!x.id.is_int64() && !x.id.is_uint64() && !x.id.is_string())
    throw decode_error("id", std::string("expected integer or string, got ") + kind_name(x.id.kind()));
  return x;
}

void tag_invoke(json::value_from_tag, json::value& v, const cancel_params& x) {
  v = json::object{{"id", x.id}};
}

const json::value* find_path(const json::value& root, std::string_view path) {
  const json::value* cur = &root;
  while (!path.empty()) {
    std::size_t dot = path.find('.');
    std::string_view key = path.substr(0, dot);
    path = dot == std::string_view::npos ? std::string_view() : path.substr(dot + 1);
    if (!cur->is_object()) return nullptr;
    cur = cur->get_object().if_contains(key);
    if (!cur) return nullptr;
  }
  return cur;
}

bool bool_at(const json::value& root, std::string_view path, bool fallback) {
  const json::value* v = find_path(root, path);
  return v && v->is_bool() ? v->get_bool() : fallback;
}

std::vector<std::string> strings_at(const json::value& root, std::string_view path) {
  std::vector<std::string> out;
  const json::value* v = find_path(root, path);
  if (!v || !v->is_array()) return out;
  for (const auto& e : v->get_array())
    if (e.is_string()) out.emplace_back(e.get_string());
  return out;
}

}  // namespace qf::lsp
