// `quickfill --stdio`: the bridge to the daemon, or the in-process server
// (see bridge.h).
#include "server/daemon/bridge.h"

#include <sys/socket.h>
#include <sys/wait.h>
#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <thread>

#include <boost/asio.hpp>
#include <boost/json.hpp>
#include <spdlog/spdlog.h>

#include "lsp/jsonrpc.h"
#include "lsp/protocol.h"
#include "lsp/transport.h"
#include "server/daemon/bridge_state.h"
#include "server/daemon/handshake.h"
#include "server/daemon/socket_dir.h"
#include "server/core/settings.h"
#include "server/binding/stdio_server.h"
#include "server/core/user_config.h"

namespace qf::server::daemon {

namespace asio = boost::asio;
using local = asio::local::stream_protocol;

bool no_daemon_from_environment() {
  const char* v = std::getenv("QUICKFILL_NO_DAEMON");
  return v && *v && std::strcmp(v, "0") != 0;
}

namespace {

int run_in_process(const server_args& a, lsp::fd_reader* reader, std::vector<std::string> first) {
  stdio_options so = stdio_options_of(a);
  so.reader = reader;
  so.first_messages = std::move(first);
  return run_stdio_server(std::move(so));
}

// The settings the initialize request carries over the user config file's
// (defaults when neither has any): daemon.enabled, daemon.idleTimeoutSeconds.
// Their problems are reported by the session that reads them again.
server_settings settings_of_initialize(const std::string& body, const std::string& user_config_path) {
  boost::system::error_code ec;
  boost::json::value v = boost::json::parse(body, ec);
  const boost::json::value* opts = ec ? nullptr : lsp::find_path(v, "params.initializationOptions");
  const boost::json::value editor = opts && has_settings(*opts) ? *opts : boost::json::value(nullptr);
  parsed_settings p = parse_layered_settings(read_user_config(user_config_path).payload, editor, nullptr);
  return p.usable ? p.values.server : server_settings{};
}

// Starts `quickfill daemon` detached (a new session, stdio on /dev/null,
// no inherited descriptors); it logs to daemon.log.
bool spawn_daemon(const socket_paths& paths, const server_args& a, int idle_s, std::string* error) {
  std::vector<std::string> args{"quickfill",   "daemon",        "--socket-dir", paths.dir,
                                "--idle-timeout", std::to_string(idle_s), "--log-file", paths.log,
                                "--log-level", a.log_level};
  if (!a.http_listen.empty()) args.insert(args.end(), {"--http", a.http_listen});  // daemon.http
  std::vector<char*> argv;
  for (auto& s : args) argv.push_back(s.data());
  argv.push_back(nullptr);
  const pid_t child = fork();
  if (child < 0) {
    *error = std::string("fork: ") + std::strerror(errno);
    return false;
  }
  if (child == 0) {
    setsid();
    if (fork() != 0) _exit(0);
    const int null = open("/dev/null", O_RDWR);
    if (null >= 0) {
      dup2(null, 0);
      dup2(null, 1);
      dup2(null, 2);
    }
    close_range(3, ~0U, 0);
    execv("/proc/self/exe", argv.data());
    _exit(127);
  }
  int status = 0;
  while (waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }
  return true;
}

// How long the daemon has to answer the hello (it answers at once from its
// accept loop; no model is loaded before).
constexpr std::chrono::seconds handshake_timeout{5};

// A connected, greeted daemon socket, or -1 with *error.
int connect_daemon(const server_args& a, int idle_s, std::string* error) {
  socket_paths paths;
  if (!prepare_socket_dir(default_socket_dir(a.socket_dir), paths, error)) return -1;
  for (int attempt = 0; attempt < 6; ++attempt) {
    int fd = connect_unix(paths.socket);
    if (fd < 0) {
      dir_lock lock;
      if (!lock.acquire(paths.lock, error)) return -1;
      fd = connect_unix(paths.socket);  // the winner of a race started it meanwhile
      if (fd < 0) {
        spdlog::info("starting the quickfill daemon in {}", paths.dir);
        if (!spawn_daemon(paths, a, idle_s, error)) return -1;
        const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(30);
        while ((fd = connect_unix(paths.socket)) < 0 && std::chrono::steady_clock::now() < until)
          std::this_thread::sleep_for(std::chrono::milliseconds(10));
        if (fd < 0) {
          *error = "the daemon did not start listening on " + paths.socket + " (see " + paths.log + ")";
          return -1;
        }
      }
    }
    // The daemon must be our own user's, whoever managed to bind the path.
    if (const long uid = peer_uid(fd); uid != static_cast<long>(::geteuid())) {
      ::close(fd);
      *error = "refusing " + paths.socket + ": it is served by uid " + std::to_string(uid) + ", not by uid " +
               std::to_string(::geteuid());
      return -1;
    }
    hello h;
    h.version = protocol_version();
    h.pid = getpid();
    h.args = a;
    const std::string line = encode_hello(h);
    std::string reply;
    bool ok = ::send(fd, line.data(), line.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(line.size());
    bool timed_out = false;
    const auto answer_by = std::chrono::steady_clock::now() + handshake_timeout;
    char c = 0;
    // Byte by byte: nothing may be read past the reply line (LSP frames follow).
    // A daemon that accepts and never answers must not hang the editor.
    while (ok && reply.size() < 4096) {
      const auto left =
          std::chrono::duration_cast<std::chrono::milliseconds>(answer_by - std::chrono::steady_clock::now()).count();
      pollfd pfd{fd, POLLIN, 0};
      const int p = left > 0 ? ::poll(&pfd, 1, static_cast<int>(left)) : 0;
      if (p < 0 && errno == EINTR) continue;
      if (p == 0) {
        ok = false;
        timed_out = true;
        break;
      }
      const ssize_t n = ::recv(fd, &c, 1, 0);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        ok = false;
        break;
      }
      if (c == '\n') break;
      reply.push_back(c);
    }
    if (timed_out) {
      ::close(fd);
      *error = "the daemon on " + paths.socket + " accepted the connection but did not answer the handshake within " +
               std::to_string(handshake_timeout.count()) + " s";
      return -1;
    }
    std::optional<hello_reply> r = ok ? decode_reply(reply, error) : std::nullopt;
    if (r && r->ok) {
      spdlog::info("connected to the quickfill daemon {} (pid {}) in {}", r->version, r->pid, paths.dir);
      return fd;
    }
    ::close(fd);
    if (r && r->error == "version") {
      spdlog::info("the daemon in {} is version {}, this is {}: it drains, starting one of ours", paths.dir,
                   r->version, h.version);
      continue;
    }
    if (r) {
      *error = "the daemon refused the connection: " + r->error;
      return -1;
    }
    // Closed without a reply: a daemon that is dying still had its socket
    // (the kernel queued our connection); once it is gone we start one.
    *error = "the daemon closed the connection during the handshake";
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  *error = "no daemon of version " + protocol_version() + " could be reached (last: " + *error + ")";
  return -1;
}

// Splits a byte stream into Content-Length frames (the daemon's output).
class frame_splitter {
 public:
  void feed(const char* p, std::size_t n) { buf_.append(p, n); }
  std::optional<std::string> next() {
    const std::size_t end = buf_.find("\r\n\r\n");
    if (end == std::string::npos) return std::nullopt;
    std::size_t length = 0;
    bool have = false;
    for (std::size_t pos = 0; pos < end;) {
      std::size_t eol = buf_.find("\r\n", pos);
      if (eol == std::string::npos || eol > end) eol = end;
      const std::string line = buf_.substr(pos, eol - pos);
      if (line.size() > 15 && strncasecmp(line.c_str(), "Content-Length:", 15) == 0) {
        length = std::strtoull(line.c_str() + 15, nullptr, 10);
        have = true;
      }
      pos = eol + 2;
    }
    if (!have) {  // cannot happen with our own daemon; drop the header
      buf_.erase(0, end + 4);
      return next();
    }
    if (buf_.size() < end + 4 + length) return std::nullopt;
    std::string body = buf_.substr(end + 4, length);
    buf_.erase(0, end + 4 + length);
    return body;
  }
  void clear() { buf_.clear(); }

 private:
  std::string buf_;
};

// All of it runs on the thread that calls run() (the io_context's only
// thread), except read_client(), the stdin reader thread, which only posts.
class bridge {
 public:
  bridge(const server_args& a, int idle_s, lsp::fd_reader& in)
      : args_(a), idle_s_(idle_s), in_(in), sock_(io_), out_(1) {}

  int run(int fd, std::string first) {
    sock_.assign(local(), fd);
    read_daemon();
    on_client(std::move(first));
    std::thread reader([this] { read_client(); });
    io_.run();
    in_.interrupt();
    reader.join();
    return code_;
  }

 private:
  void read_client() {
    for (;;) {
      lsp::read_result r = in_.read_message();
      using kind = lsp::read_result::kind;
      if (r.what == kind::message) {
        asio::post(io_, [this, b = std::move(r.body)]() mutable { on_client(std::move(b)); });
        continue;
      }
      if (r.what == kind::interrupted) return;
      if (r.what == kind::eof || r.what == kind::io_error) {
        asio::post(io_, [this] { on_client_end(); });
        return;
      }
      // A framing problem: the daemon answers what was dropped (and marks the
      // document it was about out of sync); with nothing to show, we answer.
      spdlog::warn("input: {}", r.error);
      asio::post(io_, [this, r] {
        if (!r.dropped.empty()) {
          send_daemon(r.dropped);
        } else if (r.what != kind::skipped) {
          const auto code = r.what == kind::too_large ? lsp::error_code::invalid_request : lsp::error_code::parse_error;
          out_.write_message(boost::json::serialize(lsp::make_error_response(nullptr, code, r.error)));
        }
      });
    }
  }

  void on_client(std::string body) {
    if (std::optional<std::string> fwd = state_.from_client(body)) send_daemon(std::move(*fwd));
    for (const std::string& m : state_.take_for_client()) out_.write_message(m);  // about quarantined documents
  }

  void on_client_end() {
    client_ended_ = true;
    if (!writing_) shutdown_send();
  }

  void shutdown_send() {
    boost::system::error_code ec;
    sock_.shutdown(asio::socket_base::shutdown_send, ec);
  }

  void send_daemon(std::string body) {
    queue_.push_back(lsp::frame_message(body));
    if (!writing_) write_next();
  }

  void write_next() {
    if (queue_.empty()) {
      writing_ = false;
      if (client_ended_) shutdown_send();
      return;
    }
    writing_ = true;
    const unsigned gen = generation_;
    asio::async_write(sock_, asio::buffer(queue_.front()), [this, gen](const boost::system::error_code& ec, std::size_t) {
      if (gen != generation_) return;
      if (ec) {  // the read side sees the end too and restarts
        writing_ = false;
        return;
      }
      queue_.pop_front();
      write_next();
    });
  }

  void read_daemon() {
    const unsigned gen = generation_;
    sock_.async_read_some(asio::buffer(rbuf_), [this, gen](const boost::system::error_code& ec, std::size_t n) {
      if (gen != generation_) return;
      if (ec) {
        daemon_gone(ec);
        return;
      }
      split_.feed(rbuf_.data(), n);
      while (std::optional<std::string> body = split_.next())
        if (std::optional<std::string> fwd = state_.from_daemon(*body)) out_.write_message(*fwd);
      read_daemon();
    });
  }

  void daemon_gone(const boost::system::error_code& ec) {
    if (state_.exit_sent() || client_ended_) {
      code_ = state_.exit_sent() && state_.shutdown_sent() ? 0 : 1;
      io_.stop();
      return;
    }
    spdlog::warn("the quickfill daemon went away ({}); starting it again", ec.message());
    for (const std::string& m : state_.daemon_lost()) out_.write_message(m);
    if (state_.quarantined_count() != 0)
      spdlog::warn("{} document(s) quarantined: open through two daemon stops, no longer sent to it",
                   state_.quarantined_count());
    ++generation_;
    boost::system::error_code ignored;
    sock_.close(ignored);
    queue_.clear();
    writing_ = false;
    split_.clear();
    const auto now = std::chrono::steady_clock::now();
    restarts_.push_back(now);
    while (!restarts_.empty() && now - restarts_.front() > std::chrono::minutes(1)) restarts_.pop_front();
    if (restarts_.size() > 5) {
      spdlog::error("the quickfill daemon stopped {} times within a minute; giving up", restarts_.size());
      code_ = 1;
      io_.stop();
      return;
    }
    std::string error;
    const int fd = connect_daemon(args_, idle_s_, &error);
    if (fd < 0) {
      spdlog::error("cannot reach the quickfill daemon again: {}", error);
      code_ = 1;
      io_.stop();
      return;
    }
    sock_.assign(local(), fd);
    read_daemon();
    for (std::string& m : state_.replay()) send_daemon(std::move(m));
    spdlog::info("session replayed to the new daemon: {} open document(s)", state_.open_documents());
  }

  server_args args_;
  int idle_s_;
  lsp::fd_reader& in_;
  asio::io_context io_;
  local::socket sock_;
  lsp::fd_writer out_;
  bridge_state state_;
  frame_splitter split_;
  std::array<char, 65536> rbuf_{};
  std::deque<std::string> queue_;
  bool writing_ = false, client_ended_ = false;
  unsigned generation_ = 0;
  std::deque<std::chrono::steady_clock::time_point> restarts_;
  int code_ = 1;
};

}  // namespace

int run_stdio_entry(const server_args& a) {
  lsp::fd_reader in(0, a.max_message_bytes);
  if (a.no_daemon || no_daemon_from_environment()) return run_in_process(a, &in, {});
  lsp::read_result first = in.read_message();
  if (first.what == lsp::read_result::kind::eof) {
    spdlog::info("input closed before any message");
    return 1;
  }
  if (first.what != lsp::read_result::kind::message) {
    // Not even one readable message: nothing to learn the settings from.
    spdlog::warn("input: {}; the model is loaded in this process", first.error);
    return run_in_process(a, &in, {});
  }
  const server_settings s = settings_of_initialize(first.body, a.user_config);
  if (!s.daemon_enabled) {
    spdlog::info("daemon.enabled is false: the model is loaded in this process");
    return run_in_process(a, &in, {std::move(first.body)});
  }
  const int idle_s = a.idle_timeout_s >= 0 ? a.idle_timeout_s : s.daemon_idle_timeout_s;
  // daemon.http (the user config file's only): a daemon this bridge starts serves HTTP too.
  server_args with_http = a;
  if (with_http.http_listen.empty()) with_http.http_listen = s.daemon_http;
  std::string error;
  const int fd = connect_daemon(with_http, idle_s, &error);
  if (fd < 0) {
    spdlog::warn("no quickfill daemon ({}); the model is loaded in this process", error);
    return run_in_process(a, &in, {std::move(first.body)});
  }
  bridge b(with_http, idle_s, in);
  return b.run(fd, std::move(first.body));
}

}  // namespace qf::server::daemon
