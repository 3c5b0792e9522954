// The bridge's record of its session (see bridge_state.h).
#include "server/daemon/bridge_state.h"

#include <boost/json.hpp>

#include "lsp/jsonrpc.h"
#include "lsp/protocol.h"

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

std::optional<index::text_range> range_of(const json::value& change) {
  const json::value* r = lsp::find_path(change, "range");
  if (!r || !r->is_object()) return std::nullopt;
  auto u = [&](const char* path) { return static_cast<std::uint32_t>(int_at(*r, path)); };
  return index::text_range{u("start.line"), u("start.character"), u("end.line"), u("end.character")};
}

}  // namespace

const index::document* bridge_state::document(const std::string& uri) const {
  auto it = docs_.find(uri);
  return it == docs_.end() ? nullptr : &it->second.d;
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
      const std::string prefix = "g" + std::to_string(generation_) + ":";
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
      docs_[uri] = doc{index::document(uri, str_at(p, "textDocument.languageId"), int_at(p, "textDocument.version"),
                                       str_at(p, "textDocument.text")),
                       true};
  } else if (m.method == "textDocument/didChange") {
    auto it = docs_.find(str_at(p, "textDocument.uri"));
    const json::value* changes = lsp::find_path(p, "contentChanges");
    if (it != docs_.end() && changes && changes->is_array()) {
      std::vector<index::text_change> batch;
      bool full = false;
      for (const json::value& c : changes->get_array()) {
        index::text_change tc;
        tc.range = range_of(c);
        tc.text = str_at(c, "text");
        full = full || !tc.range;
        batch.push_back(std::move(tc));
      }
      std::string error;
      if (it->second.d.apply(batch, enc_, &error)) {
        it->second.d.version = int_at(p, "textDocument.version");
        if (full) it->second.in_sync = true;
      } else {
        it->second.in_sync = false;
      }
    }
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
    const json::value id = json::value("g" + std::to_string(generation_) + ":" + json::serialize(m.id));
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
                                                   {"languageId", d.d.language_id},
                                                   {"version", d.d.version},
                                                   {"text", d.d.text}}}})));
  }
  return out;
}

}  // namespace qf::server::daemon
