// JSON-RPC 2.0 envelope handling, reply-once and dispatch (see jsonrpc.h).
#include "lsp/jsonrpc.h"

#include <cassert>
#include <cmath>

#include <spdlog/spdlog.h>

#include "text/utf8.h"

namespace qf::lsp {

namespace {

bool valid_id(const json::value& id) { return id.is_int64() || id.is_uint64() || id.is_string(); }

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// The UTF-16 code unit of a "\uXXXX" escape at s[i] (i at the backslash), -1 if none.
int escape_unit(std::string_view s, std::size_t i) {
  if (i + 6 > s.size() || s[i] != '\\' || s[i + 1] != 'u') return -1;
  int v = 0;
  for (std::size_t k = 2; k < 6; ++k) {
    const int d = hex_digit(s[i + k]);
    if (d < 0) return -1;
    v = v * 16 + d;
  }
  return v;
}

bool is_high(int u) { return u >= 0xD800 && u <= 0xDBFF; }
bool is_low(int u) { return u >= 0xDC00 && u <= 0xDFFF; }

}  // namespace

std::size_t replace_lone_surrogates(std::string& body) {
  if (body.find("\\u") == std::string::npos) return 0;
  std::size_t replaced = 0;
  for (std::size_t i = 0; i + 1 < body.size(); ++i) {
    if (body[i] != '\\') continue;
    const int u = escape_unit(body, i);
    if (u < 0) {
      ++i;  // another escape ("\\", "\"", ...): skip its second character
      continue;
    }
    if (is_high(u) && is_low(escape_unit(body, i + 6))) {
      i += 11;  // a proper pair
      continue;
    }
    if (is_high(u) || is_low(u)) {
      body.replace(i + 2, 4, "FFFD");
      ++replaced;
    }
    i += 5;
  }
  return replaced;
}

namespace {

bool find_non_finite_at(const json::value& v, std::string& path) {
  switch (v.kind()) {
    case json::kind::double_:
      return !std::isfinite(v.get_double());
    case json::kind::array: {
      const json::array& a = v.get_array();
      for (std::size_t i = 0; i < a.size(); ++i) {
        const std::size_t n = path.size();
        path += "[" + std::to_string(i) + "]";
        if (find_non_finite_at(a[i], path)) return true;
        path.resize(n);
      }
      return false;
    }
    case json::kind::object:
      for (const auto& [key, member] : v.get_object()) {
        const std::size_t n = path.size();
        if (!path.empty()) path += '.';
        path += text::utf8_prefix(std::string_view(key.data(), key.size()), 64);
        if (find_non_finite_at(member, path)) return true;
        path.resize(n);
      }
      return false;
    default:
      return false;
  }
}

}  // namespace

std::optional<std::string> find_non_finite(const json::value& v) {
  std::string path;
  if (!find_non_finite_at(v, path)) return std::nullopt;
  return path.empty() ? std::string("(the message)") : path;
}

std::size_t replace_non_finite(json::value& v) {
  std::size_t n = 0;
  if (v.is_double()) {
    if (std::isfinite(v.get_double())) return 0;
    v = nullptr;
    return 1;
  }
  if (json::array* a = v.if_array())
    for (json::value& e : *a) n += replace_non_finite(e);
  if (json::object* o = v.if_object())
    for (auto& kv : *o) n += replace_non_finite(kv.value());
  return n;
}

namespace {

// The string value of the first member `key` in raw JSON text (lenient: no
// structure is checked; common escapes are decoded, others kept as written).
std::string peek_string_member(std::string_view text, std::string_view key) {
  const std::string quoted = "\"" + std::string(key) + "\"";
  for (std::size_t at = text.find(quoted); at != std::string_view::npos; at = text.find(quoted, at + 1)) {
    std::size_t i = at + quoted.size();
    while (i < text.size() && (text[i] == ' ' || text[i] == '\t' || text[i] == '\r' || text[i] == '\n')) ++i;
    if (i >= text.size() || text[i] != ':') continue;
    ++i;
    while (i < text.size() && (text[i] == ' ' || text[i] == '\t' || text[i] == '\r' || text[i] == '\n')) ++i;
    if (i >= text.size() || text[i] != '"') continue;
    std::string out;
    for (++i; i < text.size() && text[i] != '"'; ++i) {
      if (text[i] == '\\' && i + 1 < text.size()) {
        const char e = text[++i];
        out += e == 'n' ? '\n' : e == 't' ? '\t' : e == 'r' ? '\r' : e;
      } else {
        out += text[i];
      }
    }
    if (i >= text.size()) return {};  // cut off: not usable
    return text::repair_utf8(out);
  }
  return {};
}

}  // namespace

message_peek peek_message(std::string_view text) {
  message_peek p;
  p.method = peek_string_member(text, "method");
  p.uri = peek_string_member(text, "uri");
  p.has_content_changes = text.find("\"contentChanges\"") != std::string_view::npos;
  return p;
}

incoming classify(std::string_view raw) {
  incoming m;
  const std::size_t bad_byte = text::first_invalid_utf8(raw);
  if (bad_byte != raw.size()) {
    m.invalid_code = error_code::parse_error;
    m.invalid_reason = "invalid JSON: the message is not valid UTF-8 (byte " + std::to_string(bad_byte) + " of " +
                       std::to_string(raw.size()) + ")";
    return m;
  }
  std::string body(raw);
  m.replaced_surrogates = replace_lone_surrogates(body);
  boost::system::error_code ec;
  json::value v = json::parse(body, ec);
  if (ec) {
    m.invalid_code = error_code::parse_error;
    m.invalid_reason = "invalid JSON: " + ec.message();
    return m;
  }
  if (v.is_array()) {
    m.invalid_reason = "batch messages are not supported";
    return m;
  }
  if (!v.is_object()) {
    m.invalid_reason = std::string("a message must be a JSON object, got ") + kind_name(v.kind());
    return m;
  }
  // Read "1e400" as null (kept as +-Infinity it would be written back out as
  // "Infinity", which is not JSON: on a replay, in an echoed value).
  if (std::optional<std::string> at = find_non_finite(v)) {
    m.non_finite_at = *at;
    m.replaced_non_finite = replace_non_finite(v);
    spdlog::warn("{} number(s) out of range in a message read as null (the first at {})", m.replaced_non_finite,
                 m.non_finite_at);
  }
  json::object& o = v.get_object();
  const json::value* id = o.if_contains("id");
  if (id && valid_id(*id)) m.id = *id;
  const json::value* version = o.if_contains("jsonrpc");
  if (!version || !version->is_string() || version->get_string() != "2.0") {
    m.invalid_reason = "jsonrpc: expected \"2.0\"";
    return m;
  }
  if (id && !valid_id(*id) && !id->is_null()) {
    m.invalid_reason = std::string("id: expected integer or string, got ") + kind_name(id->kind());
    return m;
  }
  const json::value* method = o.if_contains("method");
  if (!method) {
    if (!id) {
      m.invalid_reason = "message has neither a method nor an id";
      return m;
    }
    m.what = incoming::kind::response;
    if (const json::value* r = o.if_contains("result")) m.result = *r;
    if (const json::value* e = o.if_contains("error")) m.error = *e;
    return m;
  }
  if (!method->is_string()) {
    m.invalid_reason = std::string("method: expected string, got ") + kind_name(method->kind());
    return m;
  }
  m.method = std::string(method->get_string());
  if (const json::value* p = o.if_contains("params")) {
    if (!p->is_object() && !p->is_array() && !p->is_null()) {
      m.invalid_reason = std::string("params: expected object or array, got ") + kind_name(p->kind());
      return m;
    }
    m.params = *p;
  }
  if (id && id->is_null()) {
    m.invalid_reason = "id: null is not a valid request id";
    return m;
  }
  m.what = id ? incoming::kind::request : incoming::kind::notification;
  return m;
}

json::value make_response(const json::value& id, json::value result) {
  return json::object{{"jsonrpc", "2.0"}, {"id", id}, {"result", std::move(result)}};
}

json::value make_error_response(const json::value& id, error_code code, std::string_view message) {
  return json::object{{"jsonrpc", "2.0"},
                      {"id", id},
                      {"error", json::object{{"code", static_cast<int>(code)}, {"message", message}}}};
}

json::value make_notification(std::string_view method, json::value params) {
  json::object o{{"jsonrpc", "2.0"}, {"method", method}};
  if (!params.is_null()) o["params"] = std::move(params);
  return o;
}

json::value make_request(const json::value& id, std::string_view method, json::value params) {
  json::object o{{"jsonrpc", "2.0"}, {"id", id}, {"method", method}};
  if (!params.is_null()) o["params"] = std::move(params);
  return o;
}

std::string id_to_string(const json::value& id) {
  if (id.is_string()) return "s:" + std::string(id.get_string());
  return "n:" + json::serialize(id);
}

void outbox::send(const json::value& message) {
  if (closed_.load()) return;
  std::string text;
  // Never "Infinity" or "NaN" on the wire: incoming non-finite numbers are
  // refused by classify(), so one here (a remote answer's, a computed value)
  // is a bug: logged, and written as null.
  if (std::optional<std::string> at = find_non_finite(message)) {
    spdlog::error("outgoing message with a non-finite number at {}; written as null", *at);
    json::value copy = message;
    replace_non_finite(copy);
    text = json::serialize(copy);
  } else {
    text = json::serialize(message);
  }
  // The single write point: every message is valid UTF-8. Text is repaired
  // where it enters the server, so a failure here is a bug: fatal in debug
  // builds, repaired (U+FFFD) and logged in release builds.
  if (const std::size_t bad = text::first_invalid_utf8(text); bad != text.size()) {
    spdlog::error("outgoing message with invalid UTF-8 at byte {}: {}", bad,
                  text::repair_utf8(text::utf8_prefix(text, 200)));
    assert(false && "outgoing JSON-RPC message is not valid UTF-8");
    text::repair_utf8_in_place(text);
  }
  write_(text);
}

reply_once::reply_once(json::value id, std::string method, std::shared_ptr<outbox> out)
    : state_(std::make_shared<state>()) {
  state_->id = std::move(id);
  state_->method = std::move(method);
  state_->out = std::move(out);
}

reply_once::state::~state() {
  if (!replied.load() && out && !out->closed()) {
    spdlog::error("request {} ({}) finished without a reply", json::serialize(id), method);
    out->send(make_error_response(id, error_code::internal_error, "the server did not produce a reply"));
  }
}

bool reply_once::claim() const {
  bool expected = false;
  if (state_->replied.compare_exchange_strong(expected, true)) return true;
  spdlog::debug("dropping a second reply to request {} ({})", json::serialize(state_->id), state_->method);
  return false;
}

void reply_once::result(json::value value) const {
  if (!claim()) return;
  state_->out->send(make_response(state_->id, std::move(value)));
}

void reply_once::error(error_code code, std::string_view message) const {
  if (!claim()) return;
  state_->out->send(make_error_response(state_->id, code, message));
}

void dispatcher::dispatch_request(const json::value& id, const std::string& method, const json::value& params) {
  reply_once reply(id, method, out_);
  auto it = requests_.find(method);
  if (it == requests_.end()) {
    reply.error(error_code::method_not_found, "method not found: " + method);
    return;
  }
  try {
    it->second(params, reply);
  } catch (const rpc_error& e) {
    if (reply.replied()) spdlog::error("{}: {} (after the reply was sent)", method, e.what());
    reply.error(e.code(), e.what());
  } catch (const std::exception& e) {
    spdlog::error("{}: internal error: {}", method, e.what());
    reply.error(error_code::internal_error, std::string("internal error: ") + e.what());
  }
}

void dispatcher::dispatch_notification(const std::string& method, const json::value& params) {
  auto it = notifications_.find(method);
  if (it == notifications_.end()) {
    if (method.rfind("$/", 0) == 0)
      spdlog::debug("ignoring notification {}", method);
    else
      spdlog::warn("ignoring unknown notification {}", method);
    return;
  }
  try {
    it->second(params);
  } catch (const std::exception& e) {
    spdlog::error("notification {} failed: {}", method, e.what());
  }
}

void dispatcher::call(std::string_view method, json::value params, response_handler on_response) {
  json::value id;
  {
    std::lock_guard<std::mutex> lock(pending_mu_);
    id = json::string("qf-" + std::to_string(next_id_++));
    pending_[id_to_string(id)] = std::move(on_response);
  }
  out_->send(make_request(id, method, std::move(params)));
}

void dispatcher::dispatch_response(const incoming& msg) {
  response_handler fn;
  {
    std::lock_guard<std::mutex> lock(pending_mu_);
    auto it = pending_.find(id_to_string(msg.id));
    if (it == pending_.end()) {
      spdlog::warn("response to unknown request id {}", json::serialize(msg.id));
      return;
    }
    fn = std::move(it->second);
    pending_.erase(it);
  }
  if (!fn) return;
  try {
    if (!msg.error.is_null())
      fn(nullptr, &msg.error);
    else
      fn(&msg.result, nullptr);
  } catch (const std::exception& e) {
    spdlog::error("handling the response to {} failed: {}", json::serialize(msg.id), e.what());
  }
}

}  // namespace qf::lsp
