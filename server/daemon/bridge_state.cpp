// The bridge's record of its session (see bridge_state.h).
#include "server/daemon/bridge_state.h"

#include <boost/json.hpp>

#include "lsp/jsonrpc.h"
#include "lsp/protocol.h"
#include "text/lines.h"
#include "text/utf8.h"

namespace qf::server::daemon {

namespace json = boost::json;

namespace {

std::string str_at(const json::value& v, const char* path) {
  const json::value* p = lsp::find_path(v, path);
  return p && p->is_string() ? std::string(p->get_string()) : std::string();
}

std::int64_t int_at(const json::value& v, const char* path) {
  const json::value* p = lsp::find_path(v, path);
  return p && p->is_int64() ? p->get_int64() : 0;
}

// "g<generation>:", the start of the ids of a daemon's requests to the editor
// (built by appending: GCC 12 warns, falsely, about "literal" + std::string).
std::string generation_prefix(unsigned generation) {
  std::string p = "g";
  p.append(std::to_string(generation)).push_back(':');
  return p;
}

// A change's range; null for a full text (no range, or not an object).
const json::value* range_of(const json::value& change) {
  const json::value* r = lsp::find_path(change, "range");
  return r && r->is_object() ? r : nullptr;
}

// Where line `line` starts in `text`, walking its line breaks from `from`,
// the start of line `from_line` (no line table: this runs once per edit, the
// text changes every keystroke, and the walk starts at the last edit's line
// when it can); nullopt past the last line.
std::optional<std::size_t> line_start_at(std::string_view text, std::int64_t line, std::size_t from = 0,
                                         std::int64_t from_line = 0) {
  if (line < from_line) return std::nullopt;
  for (std::int64_t l = from_line; l < line; ++l) {
    const text::line_break b = text::find_line_break(text, from);
    if (b.len == 0) return std::nullopt;
    from = b.pos + b.len;
  }
  return from;
}

// The byte offset of `character` (`enc` units) on the line starting at
// `start`; past the line's end it clamps to it, as the document store does.
std::size_t offset_in_line(std::string_view text, std::size_t start, std::int64_t character,
                           text::position_encoding enc) {
  const text::line_break b = text::find_line_break(text, start);
  const std::size_t end = b.len == 0 ? text.size() : b.pos;
  return start + text::bytes_for_units(text.substr(start, end - start), static_cast<std::size_t>(character), enc);
}

// Applies one didChange's `changes` to `doc` as the document store does
// (indexing/document_store.cpp): from the batch's last full text on; without
// one, a version that does not grow is refused. False when the server has the
// document out of sync after it (the copy's text is then not used).
bool apply_did_change(bridge_state::replay_document& doc, std::int64_t version, const json::array& changes,
                      text::position_encoding enc) {
  std::size_t first = 0;
  bool full = false;
  for (std::size_t i = 0; i < changes.size(); ++i)
    if (!range_of(changes[i])) {
      first = i;
      full = true;
    }
  if (!full && (!doc.in_sync || version <= doc.version)) return false;
  for (std::size_t i = first; i < changes.size(); ++i) {
    std::string inserted = str_at(changes[i], "text");
    if (!text::is_valid_utf8(inserted)) inserted = text::repair_utf8(inserted);
    const json::value* r = range_of(changes[i]);
    if (!r) {
      doc.text = std::move(inserted);
      doc.hint_line = 0;
      doc.hint_offset = 0;
      continue;
    }
    const std::int64_t sl = int_at(*r, "start.line"), sc = int_at(*r, "start.character");
    const std::int64_t el = int_at(*r, "end.line"), ec = int_at(*r, "end.character");
    if (sl < 0 || sc < 0 || ec < 0 || sl > el || (sl == el && sc > ec)) return false;
    // The last edit left the start of its line where it was, unless it
    // began that line with "\n" after a "\r" (one break now).
    const std::size_t h = doc.hint_offset;
    const bool hint = sl >= doc.hint_line && h <= doc.text.size() &&
                      !(h > 0 && h < doc.text.size() && doc.text[h - 1] == '\r' && doc.text[h] == '\n');
    const std::optional<std::size_t> first_line =
        hint ? line_start_at(doc.text, sl, h, doc.hint_line) : line_start_at(doc.text, sl);
    const std::optional<std::size_t> last_line = first_line ? line_start_at(doc.text, el, *first_line, sl) : std::nullopt;
    if (!last_line) return false;
    const std::size_t begin = offset_in_line(doc.text, *first_line, sc, enc);
    const std::size_t end = offset_in_line(doc.text, *last_line, ec, enc);
    doc.text.replace(begin, end - begin, inserted);
    doc.hint_line = sl;
    doc.hint_offset = *first_line;
  }
  doc.version = version;
  return true;
}

}  // namespace

const bridge_state::replay_document* bridge_state::document(const std::string& uri) const {
  auto it = docs_.find(uri);
  return it == docs_.end() ? nullptr : &it->second;
}

std::vector<std::string> bridge_state::take_for_client() {
  std::vector<std::string> out;
  out.swap(for_client_);
  return out;
}

bool bridge_state::held_back(const std::string& method, const json::value& id, const json::value& params) {
  if (quarantined_.empty() || method.rfind("textDocument/", 0) != 0) return false;
  const std::string uri = str_at(params, "textDocument.uri");
  if (uri.empty() || !quarantined(uri)) return false;
  if (!id.is_null())
    for_client_.push_back(json::serialize(lsp::make_error_response(
        id, lsp::error_code::request_failed,
        "quickfill: " + uri + " is not sent to the daemon any more: the daemon stopped twice while it was open")));
  return true;
}

std::optional<std::string> bridge_state::from_client(const std::string& body) {
  lsp::incoming m = lsp::classify(body);
  using kind = lsp::incoming::kind;
  switch (m.what) {
    case kind::invalid: {
      // The daemon answers it and marks what it was about out of sync; so
      // does our copy (it is not replayed until sent in full again).
      const lsp::message_peek peek = lsp::peek_message(body);
      if (peek.method == "textDocument/didChange" || peek.has_content_changes)
        if (auto it = docs_.find(peek.uri); it != docs_.end()) it->second.in_sync = false;
      return body;
    }
    case kind::request:
      if (held_back(m.method, m.id, m.params)) return std::nullopt;
      in_flight_[lsp::id_to_string(m.id)] = {json::serialize(m.id), m.method};
      if (m.method == "initialize" && !initialize_) {
        initialize_ = body;
        initialize_id_ = lsp::id_to_string(m.id);
      }
      if (m.method == "shutdown") shutdown_sent_ = true;
      return body;
    case kind::response: {
      // An answer to a daemon request: its id is "g<generation>:<original id JSON>".
      const std::string id = m.id.is_string() ? std::string(m.id.get_string()) : std::string();
      const std::string prefix = generation_prefix(generation_);
      if (id.rfind(prefix, 0) != 0) return std::nullopt;  // for a daemon that is gone
      boost::system::error_code ec;
      json::value orig = json::parse(id.substr(prefix.size()), ec);
      if (ec) return std::nullopt;
      json::object o{{"jsonrpc", "2.0"}, {"id", orig}};
      if (!m.error.is_null()) o["error"] = m.error;
      else o["result"] = m.result;
      return json::serialize(o);
    }
    case kind::notification:
      if (held_back(m.method, nullptr, m.params)) return std::nullopt;
      break;
  }
  const json::value& p = m.params;
  if (m.method == "initialized") {
    initialized_ = true;
  } else if (m.method == "exit") {
    exit_sent_ = true;
  } else if (m.method == "workspace/didChangeConfiguration") {
    settings_ = body;
  } else if (m.method == "$/setTrace") {
    trace_ = body;
  } else if (m.method == "workspace/didChangeWorkspaceFolders") {
    folder_changes_.push_back(body);
  } else if (m.method == "textDocument/didOpen") {
    const std::string uri = str_at(p, "textDocument.uri");
    if (!uri.empty())
      docs_[uri] = replay_document{str_at(p, "textDocument.languageId"), int_at(p, "textDocument.version"),
                                   str_at(p, "textDocument.text")};
  } else if (m.method == "textDocument/didChange") {
    auto it = docs_.find(str_at(p, "textDocument.uri"));
    const json::value* changes = lsp::find_path(p, "contentChanges");
    if (it != docs_.end() && changes && changes->is_array())
      it->second.in_sync = apply_did_change(it->second, int_at(p, "textDocument.version"), changes->get_array(), enc_);
  } else if (m.method == "textDocument/didClose") {
    docs_.erase(str_at(p, "textDocument.uri"));
  }
  return body;
}

std::optional<std::string> bridge_state::from_daemon(const std::string& body) {
  lsp::incoming m = lsp::classify(body);
  using kind = lsp::incoming::kind;
  if (m.what == kind::response) {
    const std::string key = lsp::id_to_string(m.id);
    if (!replay_id_.empty() && key == replay_id_) {
      replay_id_.clear();
      return std::nullopt;  // the replayed initialize: the editor has its answer already
    }
    if (key == initialize_id_ && !initialize_answered_) {
      initialize_answered_ = true;
      const std::string e = str_at(m.result, "capabilities.positionEncoding");
      if (e == "utf-8") enc_ = text::position_encoding::utf8;
      else if (e == "utf-32") enc_ = text::position_encoding::utf32;
      else enc_ = text::position_encoding::utf16;
    }
    in_flight_.erase(key);
    return body;
  }
  if (m.what == kind::request) {
    const json::value id = json::value(generation_prefix(generation_).append(json::serialize(m.id)));
    return json::serialize(lsp::make_request(id, m.method, m.params));
  }
  if (m.what == kind::notification && m.method == "$/progress") {
    const json::value* tok = lsp::find_path(m.params, "token");
    const std::string k = str_at(m.params, "value.kind");
    if (tok) {
      if (k == "begin") progress_.insert(json::serialize(*tok));
      else if (k == "end") progress_.erase(json::serialize(*tok));
    }
  }
  return body;
}

std::vector<std::string> bridge_state::daemon_lost() {
  std::vector<std::string> out;
  for (const auto& [key, v] : in_flight_) {
    if (key == initialize_id_ && !initialize_answered_) continue;  // replayed with its own id, answered then
    out.push_back(json::serialize(lsp::make_error_response(
        json::parse(v.first), lsp::error_code::request_failed,
        "the quickfill daemon stopped while answering " + v.second + "; it was restarted, ask again")));
  }
  for (const std::string& tok : progress_)
    out.push_back(json::serialize(lsp::make_notification(
        "$/progress", json::object{{"token", json::parse(tok)},
                                   {"value", json::object{{"kind", "end"}, {"message", "the quickfill daemon restarted"}}}})));
  progress_.clear();
  std::string newly;
  for (auto it = docs_.begin(); it != docs_.end();) {
    if (++it->second.crashes < crashes_to_quarantine) {
      ++it;
      continue;
    }
    quarantined_.insert(it->first);
    newly += (newly.empty() ? "" : ", ") + it->first;
    it = docs_.erase(it);
  }
  if (!newly.empty())
    out.push_back(json::serialize(lsp::make_notification(
        "window/showMessage",
        json::object{{"type", static_cast<int>(lsp::message_type::error)},
                     {"message", "quickfill: the daemon stopped twice while " + newly +
                                     " was open; it is no longer sent to the daemon (no completions for it in this "
                                     "session)"}})));
  for (auto it = in_flight_.begin(); it != in_flight_.end();)
    it = it->first == initialize_id_ && !initialize_answered_ ? std::next(it) : in_flight_.erase(it);
  ++generation_;
  return out;
}

std::vector<std::string> bridge_state::replay() {
  std::vector<std::string> out;
  if (!initialize_) return out;
  if (initialize_answered_) {
    json::value v = json::parse(*initialize_);
    lsp::replace_non_finite(v);  // "1e400" would come out as "Infinity" (read as null, as classify does)
    json::object o = v.as_object();
    const std::string id = "quickfill-bridge-replay-" + std::to_string(generation_);
    o["id"] = id;
    replay_id_ = lsp::id_to_string(json::value(id));
    out.push_back(json::serialize(o));
  } else {
    out.push_back(*initialize_);  // still unanswered: the new daemon answers the editor
  }
  if (initialized_) out.push_back(json::serialize(lsp::make_notification("initialized", json::object{})));
  if (settings_) out.push_back(*settings_);
  if (trace_) out.push_back(*trace_);
  for (const std::string& f : folder_changes_) out.push_back(f);
  for (const auto& [uri, d] : docs_) {
    if (!d.in_sync) continue;
    out.push_back(json::serialize(lsp::make_notification(
        "textDocument/didOpen",
        json::object{{"textDocument", json::object{{"uri", uri},
                                                   {"languageId", d.language_id},
                                                   {"version", d.version},
                                                   {"text", d.text}}}})));
  }
  return out;
}

}  // namespace qf::server::daemon
