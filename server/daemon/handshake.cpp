// The daemon connection's handshake lines (see handshake.h).
#include "server/daemon/handshake.h"

#include <cstdlib>
#include <limits>

#include <boost/json.hpp>

namespace qf::server::daemon {

namespace json = boost::json;

std::string protocol_version() {
  if (const char* v = std::getenv("QUICKFILL_DAEMON_VERSION"); v && *v) return v;
  return QUICKFILL_VERSION;
}

std::string encode_hello(const hello& h) {
  const server_args& a = h.args;
  json::object o{{"quickfill", "hello"},
                 {"version", h.version},
                 {"pid", h.pid},
                 {"model", a.model_path},
                 {"device", a.device},
                 {"userConfig", a.user_config},
                 {"threads", a.threads},
                 {"background", a.background},
                 {"maxOpenDocuments", a.max_open_documents},
                 {"maxDocumentBytes", a.max_document_bytes},
                 {"maxMessageSize", a.max_message_bytes}};
  return json::serialize(o) + "\n";
}

namespace {

template <class T>
bool read_uint(const json::object& o, const char* key, T& out) {
  const json::value* v = o.if_contains(key);
  if (!v) return true;
  std::uint64_t u = 0;
  if (v->is_uint64()) u = v->get_uint64();
  else if (v->is_int64() && v->get_int64() >= 0) u = static_cast<std::uint64_t>(v->get_int64());
  else return false;
  if (u > static_cast<std::uint64_t>(std::numeric_limits<T>::max())) return false;  // never wrapped
  out = static_cast<T>(u);
  return true;
}

std::optional<json::object> parse_object(const std::string& line, std::string* error) {
  boost::system::error_code ec;
  json::value v = json::parse(line, ec);
  if (ec || !v.is_object()) {
    *error = "the handshake line is not a JSON object";
    return std::nullopt;
  }
  return v.get_object();
}

std::string string_at(const json::object& o, const char* key) {
  const json::value* v = o.if_contains(key);
  return v && v->is_string() ? std::string(v->get_string()) : std::string();
}

}  // namespace

std::optional<hello> decode_hello(const std::string& line, std::string* error) {
  if (line.size() > max_hello_bytes) {
    *error = "the hello is longer than " + std::to_string(max_hello_bytes) + " bytes";
    return std::nullopt;
  }
  auto o = parse_object(line, error);
  if (!o) return std::nullopt;
  if (string_at(*o, "quickfill") != "hello") {
    *error = "the first line is not a quickfill hello";
    return std::nullopt;
  }
  if (o->size() > max_hello_members) {
    *error = "the hello has " + std::to_string(o->size()) + " members, more than " + std::to_string(max_hello_members);
    return std::nullopt;
  }
  for (const auto& [key, v] : *o)
    if (v.is_string() && v.get_string().size() > max_hello_string) {
      *error = "the hello's \"" + std::string(key) + "\" is longer than " + std::to_string(max_hello_string) + " bytes";
      return std::nullopt;
    }
  hello h;
  h.version = string_at(*o, "version");
  h.args.model_path = string_at(*o, "model");
  if (h.args.model_path.find('/') != std::string::npos && h.args.model_path[0] != '/') {
    // The daemon works in /: the bridge makes a path absolute (server_args.cpp).
    *error = "the hello's model is a relative path (" + h.args.model_path + "); only names and absolute paths";
    return std::nullopt;
  }
  h.args.device = string_at(*o, "device");
  h.args.user_config = string_at(*o, "userConfig");  // "": the session reads no user config file
  if (!h.args.user_config.empty() && h.args.user_config[0] != '/') {
    *error = "the hello's userConfig is not an absolute path";
    return std::nullopt;
  }
  if (const json::value* b = o->if_contains("background"); b && b->is_bool()) h.args.background = b->get_bool();
  if (!read_uint(*o, "pid", h.pid) || !read_uint(*o, "threads", h.args.threads) ||
      !read_uint(*o, "maxOpenDocuments", h.args.max_open_documents) ||
      !read_uint(*o, "maxDocumentBytes", h.args.max_document_bytes) ||
      !read_uint(*o, "maxMessageSize", h.args.max_message_bytes)) {
    *error = "a number in the hello is not a non-negative integer";
    return std::nullopt;
  }
  if (h.args.max_open_documents == 0 || h.args.max_document_bytes == 0 || h.args.max_message_bytes == 0) {
    *error = "a limit in the hello is zero";
    return std::nullopt;
  }
  auto over = [&](const char* name, std::size_t v, std::size_t cap) {
    if (v <= cap) return false;
    *error = std::string("the hello's ") + name + " " + std::to_string(v) + " is over the daemon's cap of " +
             std::to_string(cap);
    return true;
  };
  if (over("threads", static_cast<std::size_t>(h.args.threads), max_hello_threads) ||
      over("maxMessageSize", h.args.max_message_bytes, max_hello_message_bytes) ||
      over("maxOpenDocuments", h.args.max_open_documents, max_hello_open_documents) ||
      over("maxDocumentBytes", h.args.max_document_bytes, max_hello_document_bytes))
    return std::nullopt;
  return h;
}

std::string encode_reply(const hello_reply& r) {
  json::object o{{"ok", r.ok}, {"version", r.version}, {"pid", r.pid}};
  if (!r.error.empty()) o["error"] = r.error;
  return json::serialize(o) + "\n";
}

std::optional<hello_reply> decode_reply(const std::string& line, std::string* error) {
  auto o = parse_object(line, error);
  if (!o) return std::nullopt;
  hello_reply r;
  const json::value* ok = o->if_contains("ok");
  if (!ok || !ok->is_bool()) {
    *error = "the daemon's reply has no \"ok\"";
    return std::nullopt;
  }
  r.ok = ok->get_bool();
  r.version = string_at(*o, "version");
  r.error = string_at(*o, "error");
  read_uint(*o, "pid", r.pid);
  return r;
}

}  // namespace qf::server::daemon
