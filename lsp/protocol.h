// The typed LSP protocol: every message shape quickfill reads or writes.
//
// Struct names are snake_case; member names are the JSON keys, camelCase as in
// the LSP specification, so that each conversion reads like the spec. Decoding
// (value_to) is strict and reports the JSON path of the first problem (see
// json_decode.h); encoding (value_from) omits empty optionals. Capabilities
// and settings that quickfill only inspects a few fields of are kept as raw
// JSON and read with lenient helpers below.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "lsp/json_decode.h"

namespace qf::lsp {

enum class error_code : int {
  parse_error = -32700,
  invalid_request = -32600,
  method_not_found = -32601,
  invalid_params = -32602,
  internal_error = -32603,
  server_not_initialized = -32002,
  unknown_error_code = -32001,
  request_failed = -32803,
  server_cancelled = -32802,
  content_modified = -32801,
  request_cancelled = -32800,
};

enum class message_type : int { error = 1, warning = 2, info = 3, log = 4 };

struct position {
  std::uint32_t line = 0;
  std::uint32_t character = 0;
  friend bool operator==(const position&, const position&) = default;
};
QF_LSP_CONVERSIONS(position);

struct range {
  lsp::position start;
  lsp::position end;
  friend bool operator==(const range&, const range&) = default;
};
QF_LSP_CONVERSIONS(range);

struct text_document_identifier {
  std::string uri;
};
QF_LSP_CONVERSIONS(text_document_identifier);

struct versioned_text_document_identifier {
  std::string uri;
  std::int32_t version = 0;
};
QF_LSP_CONVERSIONS(versioned_text_document_identifier);

struct text_document_item {
  std::string uri;
  std::string languageId;
  std::int32_t version = 0;
  std::string text;
};
QF_LSP_CONVERSIONS(text_document_item);

struct text_document_content_change_event {
  std::optional<lsp::range> range;          // absent: the whole document is replaced
  std::optional<std::uint32_t> rangeLength;  // deprecated; ignored
  std::string text;
};
QF_LSP_CONVERSIONS(text_document_content_change_event);

struct did_open_text_document_params {
  text_document_item textDocument;
};
QF_LSP_CONVERSIONS(did_open_text_document_params);

struct did_change_text_document_params {
  versioned_text_document_identifier textDocument;
  std::vector<text_document_content_change_event> contentChanges;
};
QF_LSP_CONVERSIONS(did_change_text_document_params);

struct did_close_text_document_params {
  text_document_identifier textDocument;
};
QF_LSP_CONVERSIONS(did_close_text_document_params);

struct did_save_text_document_params {
  text_document_identifier textDocument;
  std::optional<std::string> text;
};
QF_LSP_CONVERSIONS(did_save_text_document_params);

struct completion_context {
  std::int32_t triggerKind = 1;  // 1 Invoked, 2 TriggerCharacter, 3 TriggerForIncompleteCompletions
  std::optional<std::string> triggerCharacter;
};
QF_LSP_CONVERSIONS(completion_context);

struct completion_params {
  text_document_identifier textDocument;
  lsp::position position;
  std::optional<completion_context> context;
};
QF_LSP_CONVERSIONS(completion_params);

struct inline_completion_context {
  std::int32_t triggerKind = 2;  // 1 Invoked, 2 Automatic
  std::optional<json::value> selectedCompletionInfo;
};
QF_LSP_CONVERSIONS(inline_completion_context);

struct inline_completion_params {
  text_document_identifier textDocument;
  lsp::position position;
  std::optional<inline_completion_context> context;
};
QF_LSP_CONVERSIONS(inline_completion_params);

struct text_edit {
  lsp::range range;
  std::string newText;
};
QF_LSP_CONVERSIONS(text_edit);

struct completion_item {
  std::string label;
  std::optional<std::int32_t> kind;  // CompletionItemKind
  std::optional<std::string> detail;
  std::optional<std::string> sortText;
  std::string filterText;
  std::int32_t insertTextFormat = 1;  // PlainText
  lsp::text_edit textEdit;
};
QF_LSP_CONVERSIONS(completion_item);

struct completion_list {
  bool isIncomplete = false;
  std::vector<completion_item> items;
};
QF_LSP_CONVERSIONS(completion_list);

struct inline_completion_item {
  std::string insertText;
  std::optional<std::string> filterText;
  std::optional<lsp::range> range;
};
QF_LSP_CONVERSIONS(inline_completion_item);

struct inline_completion_list {
  std::vector<inline_completion_item> items;
};
QF_LSP_CONVERSIONS(inline_completion_list);

struct cancel_params {
  json::value id;  // integer or string
};
QF_LSP_CONVERSIONS(cancel_params);

struct initialize_params {
  std::optional<std::int64_t> processId;
  std::optional<std::string> rootUri;
  std::optional<std::string> rootPath;             // deprecated in favour of rootUri
  std::optional<json::value> workspaceFolders;     // WorkspaceFolder[] | null, read leniently
  json::object capabilities;
  std::optional<json::value> initializationOptions;
  std::optional<std::string> trace;  // "off" | "messages" | "verbose"
};
QF_LSP_CONVERSIONS(initialize_params);

struct did_change_configuration_params {
  json::value settings;
};
QF_LSP_CONVERSIONS(did_change_configuration_params);

struct set_trace_params {
  std::string value;
};
QF_LSP_CONVERSIONS(set_trace_params);

struct show_message_params {
  std::int32_t type = 3;
  std::string message;
};
QF_LSP_CONVERSIONS(show_message_params);

struct log_message_params {
  std::int32_t type = 4;
  std::string message;
};
QF_LSP_CONVERSIONS(log_message_params);

struct work_done_progress_create_params {
  std::string token;
};
QF_LSP_CONVERSIONS(work_done_progress_create_params);

// $/progress with a WorkDoneProgressBegin/Report/End value.
struct work_done_progress {
  std::string kind;  // "begin" | "report" | "end"
  std::optional<std::string> title;    // begin only
  std::optional<std::string> message;
  std::optional<std::uint32_t> percentage;  // begin/report
};
QF_LSP_CONVERSIONS(work_done_progress);

struct progress_params {
  std::string token;
  work_done_progress value;
};
QF_LSP_CONVERSIONS(progress_params);

// Lenient look-ups in raw capability/settings JSON: a missing or mistyped
// member yields the fallback. `path` is dot-separated ("general.positionEncodings").
const json::value* find_path(const json::value& root, std::string_view path);
bool bool_at(const json::value& root, std::string_view path, bool fallback);
std::vector<std::string> strings_at(const json::value& root, std::string_view path);

}  // namespace qf::lsp
