// The typed LSP protocol: every message shape quickfill reads or writes.
//
// Struct names are snake_case; member names are the JSON keys, camelCase as in
// the LSP specification, so that each BOOST_DESCRIBE_STRUCT list (the
// conversion, see json_decode.h) reads like the spec. Decoding (value_to) is
// strict and reports the JSON path of the first problem (see json_decode.h);
// encoding (value_from) omits empty optionals. Capabilities and settings that
// quickfill only inspects a few fields of are kept as raw JSON and read with
// lenient helpers below.
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
BOOST_DESCRIBE_STRUCT(position, (), (line, character))

struct range {
  lsp::position start;
  lsp::position end;
  friend bool operator==(const range&, const range&) = default;
};
BOOST_DESCRIBE_STRUCT(range, (), (start, end))

struct text_document_identifier {
  std::string uri;
};
BOOST_DESCRIBE_STRUCT(text_document_identifier, (), (uri))

struct versioned_text_document_identifier {
  std::string uri;
  std::int32_t version = 0;
};
BOOST_DESCRIBE_STRUCT(versioned_text_document_identifier, (), (uri, version))

struct text_document_item {
  std::string uri;
  std::string languageId;
  std::int32_t version = 0;
  std::string text;
};
BOOST_DESCRIBE_STRUCT(text_document_item, (), (uri, languageId, version, text))

struct text_document_content_change_event {
  std::optional<lsp::range> range;          // absent: the whole document is replaced
  std::optional<std::uint32_t> rangeLength;  // deprecated; ignored
  std::string text;
};
BOOST_DESCRIBE_STRUCT(text_document_content_change_event, (), (range, rangeLength, text))

struct did_open_text_document_params {
  text_document_item textDocument;
};
BOOST_DESCRIBE_STRUCT(did_open_text_document_params, (), (textDocument))

struct did_change_text_document_params {
  versioned_text_document_identifier textDocument;
  std::vector<text_document_content_change_event> contentChanges;
};
BOOST_DESCRIBE_STRUCT(did_change_text_document_params, (), (textDocument, contentChanges))

struct did_close_text_document_params {
  text_document_identifier textDocument;
};
BOOST_DESCRIBE_STRUCT(did_close_text_document_params, (), (textDocument))

struct did_save_text_document_params {
  text_document_identifier textDocument;
  std::optional<std::string> text;
};
BOOST_DESCRIBE_STRUCT(did_save_text_document_params, (), (textDocument, text))

struct completion_context {
  std::int32_t triggerKind = 1;  // 1 Invoked, 2 TriggerCharacter, 3 TriggerForIncompleteCompletions
  std::optional<std::string> triggerCharacter;
};
BOOST_DESCRIBE_STRUCT(completion_context, (), (triggerKind, triggerCharacter))

struct completion_params {
  text_document_identifier textDocument;
  lsp::position position;
  std::optional<completion_context> context;
};
BOOST_DESCRIBE_STRUCT(completion_params, (), (textDocument, position, context))

struct inline_completion_context {
  std::int32_t triggerKind = 2;  // 1 Invoked, 2 Automatic
  std::optional<json::value> selectedCompletionInfo;
};
BOOST_DESCRIBE_STRUCT(inline_completion_context, (), (triggerKind, selectedCompletionInfo))

struct inline_completion_params {
  text_document_identifier textDocument;
  lsp::position position;
  std::optional<inline_completion_context> context;
};
BOOST_DESCRIBE_STRUCT(inline_completion_params, (), (textDocument, position, context))

struct text_edit {
  lsp::range range;
  std::string newText;
};
BOOST_DESCRIBE_STRUCT(text_edit, (), (range, newText))

struct completion_item {
  std::string label;
  std::optional<std::int32_t> kind;  // CompletionItemKind
  std::optional<std::string> detail;
  std::optional<std::string> sortText;
  std::string filterText;
  std::int32_t insertTextFormat = 1;  // PlainText
  lsp::text_edit textEdit;
};
BOOST_DESCRIBE_STRUCT(completion_item, (), (label, kind, detail, sortText, filterText, insertTextFormat, textEdit))

struct completion_list {
  bool isIncomplete = false;
  std::vector<completion_item> items;
};
BOOST_DESCRIBE_STRUCT(completion_list, (), (isIncomplete, items))

struct inline_completion_item {
  std::string insertText;
  std::optional<std::string> filterText;
  std::optional<lsp::range> range;
};
BOOST_DESCRIBE_STRUCT(inline_completion_item, (), (insertText, filterText, range))

struct inline_completion_list {
  std::vector<inline_completion_item> items;
};
BOOST_DESCRIBE_STRUCT(inline_completion_list, (), (items))

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
BOOST_DESCRIBE_STRUCT(initialize_params, (),
                      (processId, rootUri, rootPath, workspaceFolders, capabilities, initializationOptions, trace))

struct did_change_configuration_params {
  json::value settings;
};
BOOST_DESCRIBE_STRUCT(did_change_configuration_params, (), (settings))

struct set_trace_params {
  std::string value;
};
BOOST_DESCRIBE_STRUCT(set_trace_params, (), (value))

struct show_message_params {
  std::int32_t type = 3;
  std::string message;
};
BOOST_DESCRIBE_STRUCT(show_message_params, (), (type, message))

struct log_message_params {
  std::int32_t type = 4;
  std::string message;
};
BOOST_DESCRIBE_STRUCT(log_message_params, (), (type, message))

struct work_done_progress_create_params {
  std::string token;
};
BOOST_DESCRIBE_STRUCT(work_done_progress_create_params, (), (token))

// $/progress with a WorkDoneProgressBegin/Report/End value.
struct work_done_progress {
  std::string kind;  // "begin" | "report" | "end"
  std::optional<std::string> title;    // begin only
  std::optional<std::string> message;
  std::optional<std::uint32_t> percentage;  // begin/report
};
BOOST_DESCRIBE_STRUCT(work_done_progress, (), (kind, title, message, percentage))

struct progress_params {
  std::string token;
  work_done_progress value;
};
BOOST_DESCRIBE_STRUCT(progress_params, (), (token, value))

// Lenient look-ups in raw capability/settings JSON: a missing or mistyped
// member yields the fallback. `path` is dot-separated ("general.positionEncodings").
const json::value* find_path(const json::value& root, std::string_view path);
bool bool_at(const json::value& root, std::string_view path, bool fallback);
std::vector<std::string> strings_at(const json::value& root, std::string_view path);

}  // namespace qf::lsp
