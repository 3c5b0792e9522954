// The HTTP(S) client (see http_client.h): one io_context per call, run on
// the caller's thread one operation at a time (each asynchronous operation is
// started, then the context runs until its handler has run, so timers such as
// the cancellation poll and the stream's expiry fire meanwhile), one
// connection per hop. Plain handlers rather than coroutines: clang 14 cannot
// build Asio coroutines with the sanitizers (scripts/sanitize.sh).
#include "server/net/http_client.h"

#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include <boost/asio.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <algorithm>
#include <cctype>

#include "server/net/name_lookup.h"
#include "server/net/url.h"

namespace qf::net {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace bhttp = boost::beast::http;
namespace ssl = boost::asio::ssl;
using tcp = asio::ip::tcp;
using clock = std::chrono::steady_clock;

namespace {

constexpr size_t chunk_bytes = 64 * 1024;
constexpr uint32_t header_limit = 64 * 1024;

bool iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(a[i])) != std::tolower(static_cast<unsigned char>(b[i]))) return false;
  return true;
}

bool is_redirect(int s) { return s == 301 || s == 302 || s == 303 || s == 307 || s == 308; }

bool icontains(std::string_view hay, std::string_view needle) {
  if (needle.size() > hay.size()) return false;
  for (size_t i = 0; i + needle.size() <= hay.size(); ++i)
    if (iequals(hay.substr(i, needle.size()), needle)) return true;
  return false;
}

bool is_ip_literal(const std::string& host) {
  boost::system::error_code ec;
  asio::ip::make_address(host, ec);
  return !ec;
}

// One fetch() call: the io_context, the cancellation poll and the request chain.
class session {
 public:
  session(const request_options& o, body_sink& sink) : o_(o), sink_(sink), poll_(io_) {}

  response run(const std::string& start) {
    response out;
    start_poll();
    chain(start, out);
    return out;
  }

 private:
  [[noreturn]] void fail(error_kind k, const std::string& msg) {
    if (cancelled_) throw http_error(error_kind::cancelled, "the request to " + url_ + " was cancelled");
    throw http_error(k, msg);
  }

  bool cancel_requested() const {
    return (o_.cancel && o_.cancel->load()) || (o_.should_cancel && o_.should_cancel());
  }

  void check_cancel() {
    if (cancelled_ || cancel_requested()) {
      cancelled_ = true;
      fail(error_kind::cancelled, "");
    }
  }

  void start_poll() {
    if (!o_.cancel && !o_.should_cancel) return;
    poll_.expires_after(std::max(o_.poll_interval, std::chrono::milliseconds(1)));
    poll_.async_wait([this](const boost::system::error_code& ec) {
      if (ec) return;
      if (cancel_requested()) {
        cancelled_ = true;
        if (lookup_) lookup_->abandon();
        if (tcp_) tcp_->socket().close();
        return;
      }
      start_poll();
    });
  }

  // Starts an operation with a handler that records its error code, then
  // runs the context until that handler has run.
  template <class Initiate>
  boost::system::error_code await(Initiate&& initiate) {
    bool finished = false;
    boost::system::error_code result;
    initiate([&](const boost::system::error_code& ec, auto&&...) {
      result = ec;
      finished = true;
    });
    if (io_.stopped()) io_.restart();
    while (!finished && io_.run_one() > 0) {
    }
    if (!finished) fail(error_kind::protocol, "internal: an operation on " + url_ + " never completed");
    return result;
  }

  error_kind kind_of(const boost::system::error_code& ec, error_kind otherwise) const {
    return ec == beast::error::timeout ? error_kind::timeout : otherwise;
  }

  // IP literals at once; names through a lookup (name_lookup.h) this request
  // abandons at the deadline or on cancellation, whatever getaddrinfo does.
  lookup_results resolve(const url& u, clock::time_point deadline) {
    boost::system::error_code ec;
    if (is_ip_literal(u.host)) {
      tcp::resolver r(io_);
      lookup_results results =
          r.resolve(u.host, u.port, tcp::resolver::numeric_host | tcp::resolver::numeric_service, ec);
      if (ec) fail(error_kind::resolve, "cannot use the address '" + u.host + "': " + ec.message());
      return results;
    }
    check_cancel();
    bool finished = false;
    lookup_results results;
    std::string refused;
    std::shared_ptr<pending_lookup> lk = start_lookup(
        io_, u.host, u.port,
        [&](const boost::system::error_code& e, lookup_results found) {
          ec = e;
          results = std::move(found);
          finished = true;
        },
        &refused);
    if (!lk) fail(error_kind::resolve, "cannot resolve host '" + u.host + "': " + refused);
    // Until the handler ran, something must keep run_one() waiting: the
    // guard, since the timer below may already have fired.
    auto guard = asio::make_work_guard(io_);
    asio::steady_timer t(io_);
    bool timed_out = false;
    t.expires_at(deadline);
    t.async_wait([&](const boost::system::error_code& e) {
      if (!e) {
        timed_out = true;
        lk->abandon();
      }
    });
    lookup_ = lk.get();
    if (io_.stopped()) io_.restart();
    while (!finished && io_.run_one() > 0) {
    }
    lookup_ = nullptr;
    t.cancel();
    guard.reset();
    if (!finished) {  // cannot happen while the guard holds the context; never leave the handler behind
      lk->abandon();
      io_.restart();
      while (!finished && io_.run_one() > 0) {
      }
      fail(error_kind::protocol, "internal: the lookup of " + u.host + " never completed");
    }
    if (timed_out)
      fail(error_kind::timeout, "resolving " + u.host + " took longer than the connect timeout (" +
                                    std::to_string(o_.connect_timeout.count()) +
                                    " ms): the system's resolver did not answer in time");
    check_cancel();
    if (ec) fail(error_kind::resolve, "cannot resolve host '" + u.host + "': " + ec.message());
    return results;
  }

  void connect(beast::tcp_stream& ts, const url& u, clock::time_point deadline) {
    auto results = resolve(u, deadline);
    check_cancel();
    tcp_ = &ts;
    ts.expires_at(deadline);
    const auto ec = await([&](auto handler) { ts.async_connect(results, handler); });
    if (ec)
      fail(kind_of(ec, error_kind::connect), "cannot connect to " + u.authority() + ": " +
                                                  (ec == beast::error::timeout ? "timed out" : ec.message()));
  }

  // The trust store and verification mode, before any stream is made on ctx.
  void prepare_context(ssl::context& ctx) {
    boost::system::error_code ec;
    ctx.set_options(ssl::context::default_workarounds | ssl::context::no_sslv2 | ssl::context::no_sslv3 |
                        ssl::context::no_tlsv1 | ssl::context::no_tlsv1_1,
                    ec);
    if (!o_.verify_tls) {
      ctx.set_verify_mode(ssl::verify_none);
      return;
    }
    if (o_.ca_file.empty())
      ctx.set_default_verify_paths(ec);
    else
      ctx.load_verify_file(o_.ca_file, ec);
    if (ec)
      fail(error_kind::tls, "cannot load the trusted certificates" +
                                (o_.ca_file.empty() ? std::string() : " from " + o_.ca_file) + ": " + ec.message());
    ctx.set_verify_mode(ssl::verify_peer);
  }

  // The host name (or address) the certificate must name, and SNI.
  void prepare_tls(SSL* handle, const url& u) {
    if (o_.verify_tls) {
      X509_VERIFY_PARAM* param = SSL_get0_param(handle);
      int ok = is_ip_literal(u.host) ? X509_VERIFY_PARAM_set1_ip_asc(param, u.host.c_str())
                                     : X509_VERIFY_PARAM_set1_host(param, u.host.c_str(), 0);
      if (ok != 1) fail(error_kind::tls, "cannot set up certificate checks for " + u.host);
    }
    if (!is_ip_literal(u.host) && SSL_set_tlsext_host_name(handle, u.host.c_str()) != 1)
      fail(error_kind::tls, "cannot set the TLS server name " + u.host);
  }

  // One request/response on a connected stream. Returns the next URL for a
  // followed redirect, or nothing when the final response is done.
  template <class Stream>
  std::optional<url> exchange(Stream& stream, beast::tcp_stream& ts, const url& u, response& out) {
    bhttp::request<bhttp::string_body> req;
    req.version(11);
    bhttp::verb v = bhttp::string_to_verb(method_);
    if (v == bhttp::verb::unknown)
      req.method_string(method_);
    else
      req.method(v);
    req.target(u.target);
    req.set(bhttp::field::host, u.authority());
    req.set(bhttp::field::user_agent, o_.user_agent);
    bool has_encoding = false;
    for (const auto& h : o_.headers) {
      if (!credentials_ && is_credential_header(h.name)) continue;
      if (iequals(h.name, "Accept-Encoding")) has_encoding = true;
      req.insert(h.name, h.value);
    }
    if (!has_encoding) req.set(bhttp::field::accept_encoding, "identity");
    if (!body_.empty() || v == bhttp::verb::post || v == bhttp::verb::put) {
      req.body() = body_;
      req.prepare_payload();
    }
    sink_.on_sending(u.str(), body_.size());
    ts.expires_after(o_.read_timeout);
    const auto wec = await([&](auto handler) { bhttp::async_write(stream, req, handler); });
    if (wec) fail(kind_of(wec, error_kind::interrupted), "cannot send the request to " + u.str() + ": " + wec.message());

    beast::flat_buffer buf;
    bhttp::response_parser<bhttp::buffer_body> parser;
    parser.header_limit(header_limit);
    parser.body_limit(boost::none);
    if (v == bhttp::verb::head) parser.skip(true);
    ts.expires_after(o_.read_timeout);
    const auto hec = await([&](auto handler) { bhttp::async_read_header(stream, buf, parser, handler); });
    if (hec) {
      error_kind k = hec == beast::error::timeout                                  ? error_kind::timeout
                     : (hec == bhttp::error::end_of_stream || hec == asio::error::eof ||
                        hec == asio::error::connection_reset)                      ? error_kind::interrupted
                                                                                   : error_kind::protocol;
      fail(k, "no valid HTTP response from " + u.str() + ": " + hec.message());
    }
    auto& msg = parser.get();
    const int status = static_cast<int>(msg.result_int());
    header_list headers;
    for (const auto& f : msg) headers.push_back({std::string(f.name_string()), std::string(f.value())});

    if (is_redirect(status)) {
      if (const std::string* loc = find_header(headers, "Location")) {
        out.redirects.push_back({status, u.str(), std::move(headers)});
        if (static_cast<int>(out.redirects.size()) > o_.max_redirects)
          fail(error_kind::redirect_limit, "more than " + std::to_string(o_.max_redirects) +
                                               " redirects, starting at " + url_ + " (last: " + u.str() + ")");
        std::string error;
        std::optional<url> next = resolve_url(u, *loc, &error);
        if (!next) fail(error_kind::bad_url, "bad redirect from " + u.str() + " to '" + *loc + "': " + error);
        if (u.tls() && !next->tls())
          fail(error_kind::insecure, "refusing the redirect (HTTP " + std::to_string(status) + ") from " + u.str() +
                                         " to " + next->str() + ": it leaves https for plain http");
        if (status == 303 || ((status == 301 || status == 302) && v == bhttp::verb::post)) {
          method_ = "GET";
          body_.clear();
        }
        if (!same_origin(u, *next)) {
          if (!body_.empty())
            fail(error_kind::redirect_refused,
                 "refusing the redirect (HTTP " + std::to_string(status) + ") from " + u.str() + " to " +
                     next->str() + ": it would send the request body to another origin");
          credentials_ = false;  // for the rest of the chain, a hop back included
        }
        return next;
      }
    }

    out.status = status;
    out.reason = std::string(msg.reason());
    out.url = u.str();
    out.headers = std::move(headers);
    if (auto n = parser.content_length()) out.content_length = *n;
    if (o_.max_body > 0 && out.content_length && *out.content_length > o_.max_body)
      fail(error_kind::too_large, "the answer from " + u.str() + " is " + std::to_string(*out.content_length) +
                                      " bytes, over the limit of " + std::to_string(o_.max_body));
    if (!sink_.on_response(out) || parser.is_done()) return std::nullopt;

    std::vector<char> tmp(chunk_bytes);
    uint64_t received = 0;
    while (!parser.is_done()) {
      msg.body().data = tmp.data();
      msg.body().size = tmp.size();
      ts.expires_after(o_.read_timeout);
      const auto rec = await([&](auto handler) { bhttp::async_read(stream, buf, parser, handler); });
      const size_t got = tmp.size() - msg.body().size;
      received += got;
      if (o_.max_body > 0 && received > o_.max_body)
        fail(error_kind::too_large, "the answer from " + u.str() + " passed the limit of " +
                                        std::to_string(o_.max_body) + " bytes; the rest was not read");
      if (got > 0 && !sink_.on_data({tmp.data(), got}))
        fail(error_kind::aborted, "the transfer from " + u.str() + " was stopped by its receiver");
      if (rec == bhttp::error::need_buffer) continue;
      if (rec) {
        std::string of = out.content_length ? " of " + std::to_string(*out.content_length) : std::string();
        if (rec == beast::error::timeout)
          fail(error_kind::timeout, "no data from " + u.str() + " for " + std::to_string(o_.read_timeout.count()) +
                                        " ms after " + std::to_string(received) + of + " bytes");
        fail(error_kind::interrupted, "the connection to " + u.authority() + " closed after " +
                                          std::to_string(received) + of + " bytes of the body (" + rec.message() + ")");
      }
    }
    return std::nullopt;
  }

  // Clears the pointer the cancellation poll closes, before the stream it
  // points to goes away (on return or on an exception).
  struct active_stream {
    beast::tcp_stream*& slot;
    ~active_stream() { slot = nullptr; }
  };

  void chain(const std::string& start, response& out) {
    url_ = start;
    std::string error;
    std::optional<url> cur = parse_url(start, &error);
    if (!cur) fail(error_kind::bad_url, "bad URL '" + start + "': " + error);
    method_ = o_.method;
    body_ = o_.body;
    credentials_ = true;
    while (cur) {
      check_cancel();
      if (credentials_ && !cur->tls() && !is_loopback_host(cur->host))
        for (const auto& h : o_.headers)
          if (is_credential_header(h.name))
            fail(error_kind::insecure, "refusing to send credentials (the " + h.name + " header) over plain http to " +
                                           cur->authority() + ": use https (plain http is allowed only to the "
                                           "loopback: localhost, 127.0.0.0/8, ::1)");
      const clock::time_point deadline = clock::now() + o_.connect_timeout;
      std::optional<url> next;
      if (cur->tls()) {
        ssl::context ctx(ssl::context::tls_client);
        prepare_context(ctx);
        beast::ssl_stream<beast::tcp_stream> stream(io_, ctx);
        const active_stream active{tcp_};
        prepare_tls(stream.native_handle(), *cur);
        beast::tcp_stream& ts = beast::get_lowest_layer(stream);
        connect(ts, *cur, deadline);
        ts.expires_at(deadline);
        const auto hec = await([&](auto handler) { stream.async_handshake(ssl::stream_base::client, handler); });
        if (hec) {
          long verify = SSL_get_verify_result(stream.native_handle());
          std::string why = verify != X509_V_OK ? std::string("certificate verification failed: ") +
                                                      X509_verify_cert_error_string(verify)
                                                : hec.message();
          fail(kind_of(hec, error_kind::tls), "TLS handshake with " + cur->authority() + " failed: " + why);
        }
        next = exchange(stream, ts, *cur, out);
      } else {
        beast::tcp_stream ts(io_);
        const active_stream active{tcp_};
        connect(ts, *cur, deadline);
        next = exchange(ts, ts, *cur, out);
      }
      cur = std::move(next);
    }
  }

  const request_options& o_;
  body_sink& sink_;
  asio::io_context io_;
  asio::steady_timer poll_;
  pending_lookup* lookup_ = nullptr;
  beast::tcp_stream* tcp_ = nullptr;
  bool cancelled_ = false;
  bool credentials_ = true;  // credential headers still go out (no redirect changed origin yet)
  std::string url_, method_, body_;
};

class string_sink final : public body_sink {
 public:
  string_sink(std::string& out, size_t max) : out_(out), max_(max) {}
  bool on_response(const response&) override { return true; }
  bool on_data(std::span<const char> bytes) override {
    if (out_.size() + bytes.size() > max_) return false;
    out_.append(bytes.data(), bytes.size());
    return true;
  }

 private:
  std::string& out_;
  size_t max_;
};

}  // namespace

const std::string* find_header(const header_list& headers, std::string_view name) {
  for (const auto& h : headers)
    if (iequals(h.name, name)) return &h.value;
  return nullptr;
}

bool is_credential_header(std::string_view name) {
  if (iequals(name, "Cookie")) return true;
  for (std::string_view part : {"auth", "key", "token", "secret", "password"})
    if (icontains(name, part)) return true;
  return false;
}

response fetch(const std::string& url, const request_options& opts, body_sink& sink) {
  session s(opts, sink);
  return s.run(url);
}

response fetch_to_string(const std::string& url, const request_options& opts, std::string& body, size_t max_body) {
  body.clear();
  request_options o = opts;
  if (o.max_body == 0 || o.max_body > max_body) o.max_body = max_body;
  string_sink sink(body, max_body);
  return fetch(url, o, sink);
}

}  // namespace qf::net
