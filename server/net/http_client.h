// A small HTTP/1.1 client on Boost.Beast and Boost.Asio, HTTPS through OpenSSL.
//
// Design: one call, fetch(), performs one request and streams the final
// response's body into a caller's sink as it arrives, so a multi-gigabyte
// download, a server-sent-events stream and a small JSON answer all take the
// same path. Each call runs its own io_context on the calling thread (C++20
// coroutines inside); nothing is shared between calls, so callers on several
// threads need no locking. Every hop opens a fresh connection (no keep-alive
// pool) and is closed when the response is done.
//
// * Redirects (301, 302, 303, 307, 308 with a Location) are followed up to
//   max_redirects; each followed hop is reported with its headers (some servers
//   put facts about the final resource on the redirect, such as a hash). 303
//   (and 301/302 after a POST) turns the request into a GET without a body.
//   Least privilege on every hop:
//   - a redirect from https to http is refused (error_kind::insecure);
//   - credentials (the headers is_credential_header() names: Authorization,
//     Cookie, API key and token headers) go only to the first URL's origin:
//     the first redirect that changes scheme, host or port drops them for the
//     rest of the chain, a hop back to the first origin included;
//   - a redirect that would send the request body to another origin (307 or
//     308 after a POST) is refused (error_kind::redirect_refused): the body
//     (a remote completion's is the user's code) goes only where it was sent;
//   - credentials over plain http are refused (error_kind::insecure) unless
//     the host is the loopback (is_loopback_host(): localhost, 127.0.0.0/8,
//     ::1).
// * Timeouts: connect_timeout bounds name resolution plus the TCP connect plus
//   the TLS handshake; read_timeout bounds each wait for bytes (the longest
//   silence tolerated), not the whole transfer. Names are looked up on a
//   thread the request can walk away from (name_lookup.h): a resolver that
//   does not answer costs the request no more than connect_timeout, and a
//   cancellation is seen while it waits.
// * Size: max_body caps the final response's body (a Content-Length over it
//   is refused before any byte is read, a longer stream is cut there), with
//   error_kind::too_large.
// * Cancellation: a flag the caller sets from any thread, or a should_cancel
//   callback (a deadline, a cancel token), or both; they are polled every
//   poll_interval (50 ms unless set) while resolving, connecting and
//   reading, a pending name lookup is abandoned and the connection closed at
//   once when either says stop, and fetch() throws
//   error_kind::cancelled. Closing the connection is how a streamed answer
//   (server-sent events) is abandoned: the server sees the socket close and
//   stops generating. A sink returning false stops the transfer too
//   (error_kind::aborted).
// * TLS: certificates are verified by default against the system store
//   (OpenSSL's default paths, which honour SSL_CERT_FILE and SSL_CERT_DIR) or
//   against ca_file; the host name (or IP address) is checked against the
//   certificate, SNI is sent for names, and TLS 1.2 is the oldest accepted.
// * Errors: transport failures throw http_error with a kind and a message that
//   names the URL; HTTP error statuses (404, 500, ...) are not exceptions: the
//   response is returned and the sink still sees it (and may skip the body).
//   A body cut short (the server closed the connection early) throws
//   error_kind::interrupted after the sink got every byte that arrived.
// * Bodies are passed through as sent: no decompression, so callers that
//   want raw bytes ask for "Accept-Encoding: identity" (the default when the
//   caller sets no Accept-Encoding).
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace qf::net {

struct header {
  std::string name, value;
};
using header_list = std::vector<header>;

// The first header with this name (case-insensitive); nullptr when absent.
const std::string* find_header(const header_list& headers, std::string_view name);

enum class error_kind {
  bad_url,         // not an http(s) URL, or a bad Location
  resolve,         // the host name did not resolve
  connect,         // TCP connect refused or failed
  tls,             // handshake or certificate verification failed
  timeout,         // connect_timeout or read_timeout ran out
  protocol,        // the server's answer is not valid HTTP/1.1
  redirect_limit,  // more than max_redirects redirects
  interrupted,     // the connection closed before the body was complete
  aborted,         // the sink asked to stop
  cancelled,       // the cancel flag was set
  insecure,        // a redirect from https to http, or credentials over plain http to another machine
  redirect_refused,  // a redirect would re-send the request body to another origin
  too_large,       // the body is larger than max_body
};

class http_error : public std::runtime_error {
 public:
  http_error(error_kind kind, const std::string& what) : std::runtime_error(what), kind_(kind) {}
  error_kind kind() const { return kind_; }

 private:
  error_kind kind_;
};

struct request_options {
  std::string method = "GET";
  header_list headers;  // sent on every hop (Range, If-Range, Accept, Authorization, ...)
  std::string body;     // with Content-Length when not empty (or when the method is POST/PUT)
  int max_redirects = 10;
  std::chrono::milliseconds connect_timeout{15000};
  std::chrono::milliseconds read_timeout{30000};
  std::string ca_file;      // "": the system store
  bool verify_tls = true;   // false only for explicit opt-outs
  std::string user_agent = "quickfill";
  const std::atomic<bool>* cancel = nullptr;
  // Polled on the calling thread with `cancel`; true stops the request.
  std::function<bool()> should_cancel;
  std::chrono::milliseconds poll_interval{50};
  uint64_t max_body = 0;  // the final response's body at most this many bytes (0: no limit)
};

// Headers that carry credentials, dropped when a redirect changes origin:
// Authorization, Proxy-Authorization, Cookie, and any name holding "key",
// "token", "secret", "password" or "auth" (X-Api-Key, Api-Key, X-Auth-Token,
// ...). Case-insensitive.
bool is_credential_header(std::string_view name);

// A redirect response that was followed.
struct redirect_hop {
  int status = 0;
  std::string url;  // the URL that answered with the redirect
  header_list headers;
};

struct response {
  int status = 0;
  std::string reason;
  std::string url;  // the final URL, after redirects
  header_list headers;
  std::vector<redirect_hop> redirects;
  std::optional<uint64_t> content_length;
};

class body_sink {
 public:
  virtual ~body_sink() = default;
  // The final response's status and headers, before any body byte. false: the
  // body is not read (fetch() returns normally).
  virtual bool on_response(const response& head) = 0;
  // A piece of the body. false stops the transfer (http_error aborted).
  virtual bool on_data(std::span<const char> bytes) = 0;
  // A request (with body_bytes of body) starts going out to `url`: from here
  // the server may receive it, whatever happens next. Once per hop.
  virtual void on_sending(const std::string& url, std::size_t body_bytes) {
    (void)url;
    (void)body_bytes;
  }
};

// Performs the request (following redirects) and streams the final body to sink.
response fetch(const std::string& url, const request_options& opts, body_sink& sink);

// fetch() into a string; bodies over max_body bytes are refused (too_large).
response fetch_to_string(const std::string& url, const request_options& opts, std::string& body,
                         size_t max_body = 16u << 20);

}  // namespace qf::net
