// JSON-RPC 2.0 as LSP uses it: message classification, replies that happen
// exactly once, and a dispatcher of typed handlers.
//
// * classify() turns a frame body into a request, notification, response or
//   an invalid message (with the error code the sender should get: -32700 for
//   bad JSON, -32600 for a bad envelope).
// * reply_once is the handle a request handler receives. It is copyable; the
//   first result()/error() is sent, later ones are dropped (a worker's late
//   result after a cancellation reply), and if the last copy dies without a
//   reply the request is answered with InternalError, so no request is ever
//   left unanswered or answered twice.
// * dispatcher maps method names to handlers. Typed handlers get their params
//   decoded strictly; a decode failure becomes InvalidParams whose message
//   names the JSON path. An rpc_error thrown by a handler becomes that error;
//   any other exception becomes InternalError. Server->client requests are
//   sent with call() and their responses matched by id.
#pragma once

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <unordered_map>

#include "lsp/protocol.h"

namespace qf::lsp {

class rpc_error : public std::runtime_error {
 public:
  rpc_error(error_code code, const std::string& message) : std::runtime_error(message), code_(code) {}
  error_code code() const { return code_; }

 private:
  error_code code_;
};

struct incoming {
  enum class kind { request, notification, response, invalid };
  kind what = kind::invalid;
  json::value id;        // request/response id (null when absent or unusable)
  std::string method;
  json::value params;    // null when absent
  json::value result;    // response only
  json::value error;     // response only (null when it succeeded)
  error_code invalid_code = error_code::invalid_request;  // invalid only
  std::string invalid_reason;                             // invalid only
  std::size_t replaced_surrogates = 0;  // lone UTF-16 surrogate escapes read as U+FFFD
  std::size_t replaced_non_finite = 0;  // numbers out of the double range ("1e400") read as null
  std::string non_finite_at;            // the JSON path of the first of them
};

// Input text: a body that is not valid UTF-8 is a parse error (-32700) that
// names the first bad byte. A "\uD800".."\uDFFF" escape that is not half of
// a proper surrogate pair is read as U+FFFD: the message is kept (a didChange
// carrying one still applies) and positions stay right, since U+FFFD is one
// unit in UTF-16 and UTF-32, and three bytes in UTF-8 like the surrogate an
// editor counts.
incoming classify(std::string_view body);

// What a message that could not be read was about, found by a lenient scan
// of its raw text (the first "method" and "uri" string members): enough to
// tell which document a lost didOpen/didChange/didClose concerned. Strings
// are valid UTF-8 (repaired), empty when not found.
struct message_peek {
  std::string method;
  std::string uri;
  bool has_content_changes = false;  // a "contentChanges" member was seen
};
message_peek peek_message(std::string_view text);

// Numbers out of the double range ("1e400") parse as +-Infinity, which is not
// JSON and must never be written back out. The JSON path of the first
// non-finite number in `v` ("params.contentChanges[0].x"), nullopt if none.
// classify() reads such numbers as null (the message is kept; a typed
// handler then reports a null where it needed a number, naming the path),
// and outbox::send writes any left as null, so no "Infinity" is ever sent.
std::optional<std::string> find_non_finite(const json::value& v);
// Replaces every non-finite number in `v` with null; how many there were.
std::size_t replace_non_finite(json::value& v);

// Rewrites lone surrogate escapes in raw JSON text to "\uFFFD" (the same
// length); returns how many there were.
std::size_t replace_lone_surrogates(std::string& body);

json::value make_response(const json::value& id, json::value result);
json::value make_error_response(const json::value& id, error_code code, std::string_view message);
json::value make_notification(std::string_view method, json::value params);
json::value make_request(const json::value& id, std::string_view method, json::value params);
std::string id_to_string(const json::value& id);

// Where outgoing messages go: the single point every message is serialized
// and checked to be valid UTF-8 (see send). Thread-safe; after close()
// nothing is sent.
class outbox {
 public:
  explicit outbox(std::function<void(const std::string&)> write) : write_(std::move(write)) {}
  void send(const json::value& message);
  void close() { closed_.store(true); }
  bool closed() const { return closed_.load(); }

 private:
  std::function<void(const std::string&)> write_;
  std::atomic<bool> closed_{false};
};

class reply_once {
 public:
  reply_once(json::value id, std::string method, std::shared_ptr<outbox> out);
  void result(json::value value) const;
  template <class T>
  void result_of(const T& value) const { result(json::value_from(value)); }
  void error(error_code code, std::string_view message) const;
  bool replied() const { return state_->replied.load(); }
  const json::value& id() const { return state_->id; }
  const std::string& method() const { return state_->method; }

 private:
  struct state {
    json::value id;
    std::string method;
    std::shared_ptr<outbox> out;
    std::atomic<bool> replied{false};
    ~state();
  };
  bool claim() const;
  std::shared_ptr<state> state_;
};

class dispatcher {
 public:
  using raw_request_handler = std::function<void(const json::value& params, const reply_once& reply)>;
  using raw_notification_handler = std::function<void(const json::value& params)>;
  using response_handler = std::function<void(const json::value* result, const json::value* error)>;

  explicit dispatcher(std::shared_ptr<outbox> out) : out_(std::move(out)) {}

  void on_request(const std::string& method, raw_request_handler fn) { requests_[method] = std::move(fn); }
  void on_notification(const std::string& method, raw_notification_handler fn) {
    notifications_[method] = std::move(fn);
  }
  template <class P>
  void on_request(const std::string& method, std::function<void(const P&, const reply_once&)> fn) {
    on_request(method, raw_request_handler([fn = std::move(fn)](const json::value& params, const reply_once& r) {
                 fn(decode_params<P>(params), r);
               }));
  }
  template <class P>
  void on_notification(const std::string& method, std::function<void(const P&)> fn) {
    on_notification(method, raw_notification_handler([fn = std::move(fn)](const json::value& params) {
                      fn(decode_params<P>(params));
                    }));
  }

  bool has_request(const std::string& method) const { return requests_.count(method) != 0; }
  void dispatch_request(const json::value& id, const std::string& method, const json::value& params);
  void dispatch_notification(const std::string& method, const json::value& params);
  void dispatch_response(const incoming& msg);

  // Server->client traffic.
  void notify(std::string_view method, json::value params) { out_->send(make_notification(method, std::move(params))); }
  void call(std::string_view method, json::value params, response_handler on_response);
  const std::shared_ptr<outbox>& out() const { return out_; }

  // Decodes params, turning a decode_error into InvalidParams with the path.
  template <class P>
  static P decode_params(const json::value& params) {
    try {
      P p{};
      decode_value(params, p);
      return p;
    } catch (const decode_error& e) {
      throw rpc_error(error_code::invalid_params, e.message("params"));
    }
  }

 private:
  std::shared_ptr<outbox> out_;
  std::unordered_map<std::string, raw_request_handler> requests_;
  std::unordered_map<std::string, raw_notification_handler> notifications_;
  std::mutex pending_mu_;
  std::map<std::string, response_handler> pending_;  // keyed by id_to_string(id)
  std::int64_t next_id_ = 1;
};

}  // namespace qf::lsp
