// The llama-server-compatible HTTP endpoint (see http_server.h).
#include "server/http/http_server.h"

#include <chrono>
#include <filesystem>
#include <list>
#include <optional>

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/json.hpp>
#include <spdlog/spdlog.h>

#include "server/http/fim_mapping.h"
#include "server/report/report_html.h"
#include "server/core/server_core.h"

namespace qf::http {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace bhttp = boost::beast::http;
namespace json = boost::json;
using tcp = asio::ip::tcp;
using server::clock;

bool parse_listen_address(const std::string& text, http_options& out, std::string* error) {
  std::string host = out.host, port = text;
  const std::size_t colon = text.rfind(':');
  if (colon != std::string::npos) {
    host = text.substr(0, colon);
    port = text.substr(colon + 1);
    if (host.size() >= 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
    if (host.empty()) host = "127.0.0.1";
  }
  int p = -1;
  try {
    std::size_t used = 0;
    p = std::stoi(port, &used);
    if (used != port.size()) p = -1;
  } catch (...) {
    p = -1;
  }
  if (p < 0 || p > 65535) {
    if (error) *error = "--http wants HOST:PORT (e.g. 127.0.0.1:8012), got '" + text + "'";
    return false;
  }
  out.host = host;
  out.port = p;
  return true;
}

namespace {

constexpr auto read_timeout = std::chrono::seconds(60);   // an idle keep-alive connection
constexpr auto write_timeout = std::chrono::seconds(60);  // a client that reads nothing

std::string model_name(const server::model_state& m) {
  if (m.path.empty()) return "quickfill";
  return std::filesystem::path(m.path).filename().string();
}

}  // namespace

class connection;

struct http_server::state : std::enable_shared_from_this<http_server::state> {
  state(server::server_core& c, asio::io_context& i, http_options o)
      : core(c), ioc(i), opts(std::move(o)), acceptor(i), pool(opts.buffers) {}
  server::server_core& core;
  asio::io_context& ioc;
  http_options opts;
  api_keys keys;
  tcp::acceptor acceptor;
  buffer_pool pool;
  std::list<std::weak_ptr<connection>> conns;
  std::size_t open = 0;
  std::size_t pending = 0;
  std::uint64_t next_job = 0;
  bool loopback = true;  // bound to a loopback address
  bool stopped = false;
  void accept();
};

class connection : public std::enable_shared_from_this<connection> {
 public:
  connection(std::shared_ptr<http_server::state> st, tcp::socket s) : st_(std::move(st)), stream_(std::move(s)) {}
  ~connection() { --st_->open; }

  void start() { read_request(); }
  void close() {
    if (closed_) return;
    closed_ = gone_ = true;
    beast::error_code ec;
    cancel_job();
    stream_.socket().shutdown(tcp::socket::shutdown_both, ec);
    stream_.close();
  }

 private:
  using request = bhttp::request<bhttp::string_body>;
  using response = bhttp::response<bhttp::string_body>;

  void read_request() {
    parser_.emplace();
    parser_->body_limit(st_->opts.max_body_bytes);
    parser_->header_limit(64 * 1024);
    stream_.expires_after(read_timeout);
    bhttp::async_read(stream_, buf_, *parser_,
                      [self = shared_from_this()](beast::error_code ec, std::size_t) { self->on_request(ec); });
  }

  void on_request(beast::error_code ec) {
    if (ec == bhttp::error::end_of_stream || ec == asio::error::operation_aborted || ec == beast::error::timeout ||
        ec == asio::error::eof || ec == asio::error::connection_reset) {
      close();
      return;
    }
    if (ec == bhttp::error::body_limit) {
      keep_alive_ = false;
      send_json(bhttp::status::payload_too_large, error_json(413, "the request body is larger than " +
                                                                   std::to_string(st_->opts.max_body_bytes) + " bytes"));
      return;
    }
    if (ec == bhttp::error::header_limit) {
      keep_alive_ = false;
      send_json(bhttp::status::request_header_fields_too_large, error_json(431, "the request headers are too large"));
      return;
    }
    if (ec) {
      keep_alive_ = false;
      send_json(bhttp::status::bad_request, error_json(400, "not an HTTP request: " + ec.message()));
      return;
    }
    req_ = parser_->release();
    keep_alive_ = req_.keep_alive();
    try {
      route();
    } catch (const std::exception& ex) {
      spdlog::error("http: {} {}: {}", std::string(req_.method_string()), std::string(req_.target()), ex.what());
      send_json(bhttp::status::internal_server_error, error_json(500, std::string("internal error: ") + ex.what()));
    }
  }

  // On a loopback address a Host naming another machine is a web page's
  // request through DNS rebinding: refused (a browser's cross-origin request
  // gets no CORS header either).
  bool host_allowed() const {
    if (!st_->loopback) return true;
    std::string host(req_[bhttp::field::host]);
    if (host.empty()) return true;  // HTTP/1.0 clients send none
    if (host.front() == '[') host = host.substr(0, host.find(']') + 1);
    else if (const std::size_t c = host.rfind(':'); c != std::string::npos) host.resize(c);
    return host == "127.0.0.1" || host == "localhost" || host == "[::1]" || host.rfind("127.", 0) == 0;
  }

  void route() {
    if (!host_allowed())
      return send_json(bhttp::status::forbidden,
                       error_json(403, "this server answers requests for 127.0.0.1 or localhost only (Host: " +
                                           std::string(req_[bhttp::field::host]) + ")"));
    std::string target(req_.target());
    if (const std::size_t q = target.find('?'); q != std::string::npos) target.resize(q);
    const bool get = req_.method() == bhttp::verb::get;
    const bool post = req_.method() == bhttp::verb::post;
    if (target == "/health" || target == "/v1/health") {
      if (!get) return method_not_allowed();
      return health();
    }
    if (st_->keys.required()) {
      key_index_ = st_->keys.match(req_[bhttp::field::authorization], req_["X-Api-Key"]);
      if (key_index_ < 0) return send_json(bhttp::status::unauthorized, error_json(401, "Invalid API Key"));
    }
    if (target == "/infill" || target == "/v1/completions" || target == "/completions") {
      if (!post) return method_not_allowed();
      return completion(target == "/infill");
    }
    if (target == "/v1/models" || target == "/models") {
      if (!get) return method_not_allowed();
      return models();
    }
    if (target == "/props") {
      if (!get) return method_not_allowed();
      return props();
    }
    if (target == "/quickfill/stats") {
      if (!get) return method_not_allowed();
      return send_json(bhttp::status::ok, stats_json());
    }
    if (target == "/quickfill/report") {
      if (!get) return method_not_allowed();
      std::string error;
      std::string html = server::report::render_report_html(stats_json(), &error);
      if (html.empty()) return send_json(bhttp::status::internal_server_error, error_json(500, error));
      return send(bhttp::status::ok, std::move(html), "text/html; charset=utf-8");
    }
    send_json(bhttp::status::not_found, error_json(404, "no such endpoint: " + target +
                                                            " (this server answers /infill, /v1/completions, /v1/models, "
                                                            "/health, /props, /quickfill/stats, /quickfill/report)"));
  }

  void method_not_allowed() {
    send_json(bhttp::status::method_not_allowed,
              error_json(405, std::string(req_.method_string()) + " is not allowed on " + std::string(req_.target())));
  }

  json::value stats_json() { return st_->core.stats_json(50); }

  void health() {
    const server::model_state m = st_->core.model();
    if (m.loaded) return send_json(bhttp::status::ok, json::object{{"status", "ok"}});
    if (m.loading || (!m.loaded && m.error.empty()))
      return send_json(bhttp::status::service_unavailable, error_json(503, "Loading model"));
    send_json(bhttp::status::service_unavailable, error_json(503, "no model is loaded: " + m.error));
  }

  void models() {
    const server::model_state m = st_->core.model();
    json::object meta{{"description", m.description}, {"path", m.path}};
    json::object model{{"id", model_name(m)}, {"object", "model"}, {"created", 0}, {"owned_by", "quickfill"},
                       {"meta", std::move(meta)}};
    send_json(bhttp::status::ok, json::object{{"object", "list"}, {"data", json::array{std::move(model)}},
                                              {"models", json::array{json::object{{"name", model_name(m)},
                                                                                  {"model", model_name(m)}}}}});
  }

  void props() {
    const server::model_state m = st_->core.model();
    send_json(bhttp::status::ok,
              json::object{{"model_path", m.path},
                           {"total_slots", st_->pool.capacity()},
                           {"build_info", std::string("quickfill ") + QUICKFILL_VERSION},
                           {"default_generation_settings", json::object{{"id_slot", 0}, {"params", json::object{}}}},
                           {"modalities", json::object{{"vision", false}, {"audio", false}}}});
  }

  void completion(bool infill) {
    std::string error;
    std::optional<fim_request> q = infill ? parse_infill(req_.body(), &error) : parse_openai_completion(req_.body(), &error);
    if (!q) return send_json(bhttp::status::bad_request, error_json(400, error));
    const clock::time_point received = clock::now();
    server::request_record base;
    base.inline_request = true;
    base.explicit_trigger = false;
    base.http = true;
    base.slo_budget_ms = st_->core.settings().slo_budget_ms;
    if (q->n_predict == 0) {
      // A warm-up (llama.vim sends its ring chunks this way): nothing to
      // decode. The chunks come with the next request that wants text.
      fim_answer a;
      a.model = model_name(st_->core.model());
      a.stop_type = "limit";
      base.outcome = server::request_outcome::answered;
      base.wall_ms = std::chrono::duration<double, std::milli>(clock::now() - received).count();
      st_->core.stats().record(base);
      return answer(*q, a);
    }
    if (st_->pending >= st_->opts.max_pending)
      return send_json(bhttp::status::too_many_requests,
                       error_json(429, "too many completions at once (" + std::to_string(st_->opts.max_pending) +
                                           " queued or running); try again"));
    const std::string doc = q->prefix + q->middle + q->suffix;
    const std::string key =
        st_->pool.choose("k" + std::to_string(key_index_), doc, q->prefix.size() + q->middle.size());
    server::completion_request creq = make_completion_request(*q, key, received, st_->opts.deadline_ms);
    base.uri = key;
    auto shared_req = std::make_shared<server::completion_request>(creq);
    job_key_ = "http-" + std::to_string(++st_->next_job);
    ++st_->pending;
    job_open_ = true;
    auto self = shared_from_this();
    auto fq = std::make_shared<fim_request>(std::move(*q));
    auto on_cancel = [self, base, received](qf::cancel_reason why) {
      asio::post(self->st_->ioc, [self, base, received, why] {
        if (!self->job_open_) return;
        self->finish_job();
        server::request_record r = base;
        r.outcome = server::request_outcome::cancelled;
        r.reason = why;
        r.wall_ms = std::chrono::duration<double, std::milli>(clock::now() - received).count();
        self->st_->core.stats().record(r);
        if (self->gone_) return self->close();
        self->send_json(bhttp::status::service_unavailable,
                        error_json(503, std::string("the request was cancelled: ") + server::cancel_message(why)));
      });
    };
    auto done = [self, base, received, fq, shared_req](server::server_core::completion_outcome out) {
      if (!self->job_open_) return;
      self->finish_job();
      server::request_record r = base;
      r.wall_ms = std::chrono::duration<double, std::milli>(clock::now() - received).count();
      if (out.no_model || out.failed) {
        r.outcome = out.failed ? server::request_outcome::failed : server::request_outcome::no_model;
        self->st_->core.stats().record(r);
        if (self->gone_) return self->close();
        const server::model_state m = self->st_->core.model();
        return self->send_json(bhttp::status::service_unavailable,
                               error_json(503, out.failed ? "the completion failed: " + out.error
                                                          : "no model is loaded" + (m.error.empty() ? std::string()
                                                                                                   : ": " + m.error)));
      }
      r.outcome = server::request_outcome::answered;
      r.items = out.result.items.size();
      r.metrics = out.result.metrics;
      self->st_->core.stats().record(r);
      if (self->gone_) return self->close();
      fim_answer a = make_answer(*fq, *shared_req, out.result, model_name(self->st_->core.model()));
      self->answer(*fq, a);
    };
    st_->core.complete(job_key_, std::move(creq), std::move(done), std::move(on_cancel));
    watch_peer();
  }

  // While a job runs: a read that ends (EOF, reset) means the client left.
  void watch_peer() {
    watching_ = true;
    stream_.expires_never();
    stream_.async_read_some(buf_.prepare(4096), [self = shared_from_this()](beast::error_code ec, std::size_t n) {
      self->watching_ = false;
      if (!ec) {
        self->buf_.commit(n);  // a pipelined request: kept for the next read
        if (self->job_open_) return self->watch_peer();
      } else if (self->job_open_ && ec != asio::error::operation_aborted) {
        self->gone_ = true;
        self->cancel_job();
        return;
      }
      if (self->read_after_watch_) {
        self->read_after_watch_ = false;
        self->read_request();
      }
    });
  }

  void finish_job() {
    job_open_ = false;
    --st_->pending;
    if (watching_) {
      beast::error_code ec;
      stream_.socket().cancel(ec);
    }
  }

  void cancel_job() {
    if (job_open_) st_->core.cancel(job_key_);
  }

  void answer(const fim_request& q, const fim_answer& a) {
    const long long created = std::chrono::duration_cast<std::chrono::seconds>(
                                  std::chrono::system_clock::now().time_since_epoch())
                                  .count();
    const std::string id = "cmpl-" + job_key_;
    if (!q.stream) {
      return send_json(bhttp::status::ok, q.openai ? openai_answer_json(q, a, id, created) : infill_answer_json(q, a));
    }
    std::string body;
    const auto events = q.openai ? openai_stream_events(q, a, id, created) : infill_stream_events(q, a);
    for (const auto& e : events) body += "data: " + json::serialize(e) + "\n\n";
    if (q.openai) body += "data: [DONE]\n\n";
    send(bhttp::status::ok, std::move(body), "text/event-stream");
  }

  void send_json(bhttp::status status, const json::value& v) {
    send(status, json::serialize(v), "application/json; charset=utf-8");
  }

  void send(bhttp::status status, std::string body, const char* type) {
    auto res = std::make_shared<response>(status, req_.version() ? req_.version() : 11);
    res->set(bhttp::field::server, "quickfill");
    res->set(bhttp::field::content_type, type);
    res->keep_alive(keep_alive_ && !st_->stopped);
    res->body() = std::move(body);
    res->prepare_payload();
    stream_.expires_after(write_timeout);
    bhttp::async_write(stream_, *res, [self = shared_from_this(), res](beast::error_code ec, std::size_t) {
      if (ec || !res->keep_alive()) return self->close();
      if (self->watching_) {
        self->read_after_watch_ = true;  // once the cancelled watch has come back
        return;
      }
      self->read_request();
    });
  }

  std::shared_ptr<http_server::state> st_;
  beast::tcp_stream stream_;
  beast::flat_buffer buf_;
  std::optional<bhttp::request_parser<bhttp::string_body>> parser_;
  request req_;
  bool keep_alive_ = true;
  int key_index_ = 0;
  std::string job_key_;
  bool job_open_ = false;          // a completion job of this connection is queued or running
  bool watching_ = false;          // a read watching for the client leaving is pending
  bool read_after_watch_ = false;  // read the next request when that read comes back
  bool gone_ = false;              // the client left while its job ran (or the server closed it)
  bool closed_ = false;
};

void http_server::state::accept() {
  acceptor.async_accept([self = shared_from_this()](beast::error_code ec, tcp::socket s) {
    if (self->stopped || ec == asio::error::operation_aborted) return;
    if (!ec) {
      beast::error_code ignored;
      s.set_option(tcp::no_delay(true), ignored);
      if (self->open >= self->opts.max_connections) {
        spdlog::warn("http: refusing a connection: {} are open (the limit)", self->open);
        s.close(ignored);
      } else {
        ++self->open;
        auto c = std::make_shared<connection>(self, std::move(s));
        self->conns.remove_if([](const std::weak_ptr<connection>& w) { return w.expired(); });
        self->conns.push_back(c);
        c->start();
      }
    } else {
      spdlog::warn("http: accept failed: {}", ec.message());
    }
    self->accept();
  });
}

http_server::http_server(server::server_core& core, asio::io_context& ioc, http_options opts)
    : st_(std::make_shared<state>(core, ioc, std::move(opts))) {}

http_server::~http_server() { stop(); }

bool http_server::start(std::string* error) {
  auto fail = [&](const std::string& m) {
    if (error) *error = m;
    return false;
  };
  const http_options& o = st_->opts;
  if (!o.api_key_file.empty()) {
    std::string why;
    auto k = api_keys::load(o.api_key_file, &why);
    if (!k) return fail(why);
    st_->keys = std::move(*k);
  }
  beast::error_code ec;
  const asio::ip::address addr = asio::ip::make_address(o.host == "localhost" ? "127.0.0.1" : o.host, ec);
  if (ec) return fail("--http: '" + o.host + "' is not an IP address (use 127.0.0.1, ::1 or an interface's address)");
  if (!addr.is_loopback() && !o.allow_remote)
    return fail("--http " + o.host + " is not a loopback address: other machines could reach it; add --allow-remote "
                "(and --api-key-file) to serve them");
  st_->loopback = addr.is_loopback();
  const tcp::endpoint ep(addr, static_cast<unsigned short>(o.port));
  st_->acceptor.open(ep.protocol(), ec);
  if (!ec) st_->acceptor.set_option(asio::socket_base::reuse_address(true), ec);
  if (!ec) st_->acceptor.bind(ep, ec);
  if (!ec) st_->acceptor.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) return fail("cannot listen on " + o.host + ":" + std::to_string(o.port) + ": " + ec.message());
  if (!addr.is_loopback() && !st_->keys.required())
    spdlog::warn("http: serving {} without API keys: anyone who reaches it can use it", o.host);
  st_->accept();
  return true;
}

void http_server::stop() {
  if (st_->stopped) return;
  st_->stopped = true;
  beast::error_code ec;
  st_->acceptor.close(ec);
  for (auto& w : st_->conns)
    if (auto c = w.lock()) c->close();
  st_->conns.clear();
}

int http_server::port() const {
  beast::error_code ec;
  const auto ep = st_->acceptor.local_endpoint(ec);
  return ec ? -1 : ep.port();
}

}  // namespace qf::http
