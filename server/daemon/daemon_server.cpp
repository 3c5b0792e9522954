// The per-user daemon: accept loop, handshake, sessions, idle exit (see
// daemon_server.h).
#include "server/daemon/daemon_server.h"

#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <thread>

#include <boost/asio.hpp>
#include <boost/json.hpp>
#include <spdlog/spdlog.h>

#include "server/daemon/engine_pool.h"
#include "server/daemon/handshake.h"
#include "server/daemon/socket_dir.h"
#include "server/daemon/status_probe.h"
#include "server/core/logging.h"
#include "server/binding/lsp_server.h"
#include "server/core/settings.h"
#include "server/binding/stdio_server.h"

namespace qf::server::daemon {

namespace asio = boost::asio;
using local = asio::local::stream_protocol;

namespace {

class daemon_server {
 public:
  daemon_server(const server_args& args, socket_paths paths, http_service http, engine_loaders engines)
      : args_(args),
        http_(std::move(http)),
        paths_(std::move(paths)),
        acceptor_(io_),
        signals_(io_, SIGTERM, SIGINT),
        idle_(io_),
        pool_(engines.load_backend ? std::move(engines) : model_loaders()) {
    idle_s_ = args.idle_timeout_s >= 0 ? args.idle_timeout_s : server_settings{}.daemon_idle_timeout_s;
    client_timeout_ms_ = std::min(args.client_timeout_s, 86400) * 1000;
  }

  int run() {
    if (!listen()) return 1;
    spdlog::info("daemon {} (pid {}) listening on {}, idle timeout {} s, at most {} session(s), clients dropped "
                 "after {} s without reading",
                 protocol_version(), getpid(), paths_.socket, idle_s_, args_.max_sessions, args_.client_timeout_s);
    signals_.async_wait([this](const boost::system::error_code& ec, int sig) {
      if (ec) return;
      spdlog::info("daemon: signal {}, ending {} session(s)", sig, sessions_.size());
      stop_listening();
      for (auto& [id, s] : sessions_) ::shutdown(s.fd, SHUT_RDWR);
      if (stop_http_) stop_http_();
      stop_http_ = nullptr;
      stopping_ = true;
      maybe_finish();
    });
    // Without its HTTP endpoint (a port taken, say) the daemon still serves its
    // editors: the log says why.
    if (!args_.http_listen.empty()) start_http();
    accept_next();
    arm_idle();
    io_.run();
    if (stop_http_) stop_http_();
    stop_http_ = nullptr;
    cleanup();
    spdlog::info("daemon: exiting");
    spdlog::default_logger()->flush();
    return 0;
  }

 private:
  struct session {
    int fd = -1;
    std::thread thread;
  };
  // Connections that have not sent their hello yet, each held up to 10 s.
  static constexpr int max_handshakes = 16;

  bool listen() {
    if (int fd = connect_unix(paths_.socket); fd >= 0) {
      ::close(fd);
      spdlog::error("daemon: another daemon already listens on {}", paths_.socket);
      return false;
    }
    ::unlink(paths_.socket.c_str());  // a stale socket of a daemon that died
    boost::system::error_code ec;
    const mode_t old = ::umask(0177);  // the socket is born 0600
    acceptor_.open(local(), ec);
    if (!ec) acceptor_.bind(local::endpoint(paths_.socket), ec);
    ::umask(old);
    if (!ec) acceptor_.listen(asio::socket_base::max_listen_connections, ec);
    if (ec) {
      spdlog::error("daemon: cannot listen on {}: {}", paths_.socket, ec.message());
      return false;
    }
    ::chmod(paths_.socket.c_str(), 0600);
    struct stat st {};
    if (::stat(paths_.socket.c_str(), &st) == 0) {
      sock_dev_ = st.st_dev;
      sock_ino_ = st.st_ino;
    }
    std::ofstream(paths_.pid) << getpid() << "\n";
    return true;
  }

  // Removes the socket (and pid file) only while they are still ours: after
  // a drain another daemon may own the path.
  void unlink_if_ours() {
    struct stat st {};
    if (::stat(paths_.socket.c_str(), &st) == 0 && st.st_dev == sock_dev_ && st.st_ino == sock_ino_) {
      ::unlink(paths_.socket.c_str());
      std::ifstream pf(paths_.pid);
      long pid = 0;
      if (pf >> pid && pid == getpid()) ::unlink(paths_.pid.c_str());
    }
  }

  void stop_listening() {
    if (!acceptor_.is_open()) return;
    boost::system::error_code ec;
    acceptor_.close(ec);
    unlink_if_ours();
  }

  void cleanup() {
    stop_listening();
    for (auto& [id, s] : sessions_)
      if (s.thread.joinable()) s.thread.join();
  }

  void accept_next() {
    acceptor_.async_accept([this](const boost::system::error_code& ec, local::socket sock) {
      if (ec) {
        if (ec != asio::error::operation_aborted) spdlog::warn("daemon: accept: {}", ec.message());
        if (acceptor_.is_open()) accept_next();
        return;
      }
      handle_connection(std::make_shared<local::socket>(std::move(sock)));
      if (acceptor_.is_open()) accept_next();
    });
  }

  void handle_connection(std::shared_ptr<local::socket> sock) {
    const long uid = peer_uid(sock->native_handle());
    if (uid != static_cast<long>(::geteuid())) {
      spdlog::warn("daemon: refused a connection from uid {} (only uid {} is served)", uid, ::geteuid());
      reply_and_close(sock, hello_reply{false, protocol_version(), getpid(), "refused: another user"});
      return;
    }
    if (handshaking_ >= max_handshakes) {
      spdlog::warn("daemon: refused a connection: {} handshakes already pending", handshaking_);
      reply_and_close(sock, hello_reply{false, protocol_version(), getpid(), "refused: too many pending handshakes"});
      return;
    }
    ++handshaking_;
    auto buf = std::make_shared<asio::streambuf>(max_hello_bytes);
    auto timer = std::make_shared<asio::steady_timer>(io_, std::chrono::seconds(10));
    timer->async_wait([sock](const boost::system::error_code& ec) {
      if (!ec) sock->close();  // no hello in time
    });
    asio::async_read_until(*sock, *buf, '\n',
                           [this, sock, buf, timer](const boost::system::error_code& ec, std::size_t n) {
                             --handshaking_;
                             timer->cancel();
                             if (ec == asio::error::not_found) {  // the buffer's cap: no line end in it
                               const std::string e = "the hello is longer than " + std::to_string(max_hello_bytes) + " bytes";
                               spdlog::warn("daemon: bad handshake: {}", e);
                               reply_and_close(sock, hello_reply{false, protocol_version(), getpid(), e});
                               return;
                             }
                             if (ec) return;
                             std::string line(asio::buffers_begin(buf->data()), asio::buffers_begin(buf->data()) + n);
                             buf->consume(n);
                             on_hello(sock, line, buf->size() != 0);
                           });
  }

  void reply_and_close(std::shared_ptr<local::socket> sock, hello_reply r) { send_and_close(sock, encode_reply(r)); }

  void send_and_close(std::shared_ptr<local::socket> sock, std::string line) {
    auto text = std::make_shared<std::string>(std::move(line));
    asio::async_write(*sock, asio::buffer(*text), [sock, text](const boost::system::error_code&, std::size_t) {
      boost::system::error_code ignored;
      sock->shutdown(asio::socket_base::shutdown_both, ignored);
      sock->close(ignored);
    });
  }

  void on_hello(std::shared_ptr<local::socket> sock, const std::string& line, bool data_after) {
    if (is_status_probe(line)) {  // `quickfill doctor`: one line back, no session
      send_and_close(sock, encode_status(daemon_status{protocol_version(), static_cast<long>(getpid()),
                                                       static_cast<long>(sessions_.size()),
                                                       static_cast<long>(pool_.engines()), paths_.socket}));
      return;
    }
    std::string error;
    std::optional<hello> h = decode_hello(line, &error);
    if (h && data_after) error = "data before the handshake reply";
    if (!h || !error.empty()) {
      spdlog::warn("daemon: bad handshake: {}", error);
      reply_and_close(sock, hello_reply{false, protocol_version(), getpid(), error});
      return;
    }
    if (h->version != protocol_version()) {
      spdlog::info("daemon: a bridge of version {} (pid {}) connected; this daemon is {}: draining ({} session(s) "
                   "left)",
                   h->version, h->pid, protocol_version(), sessions_.size());
      reply_and_close(sock, hello_reply{false, protocol_version(), getpid(), "version"});
      stop_listening();
      draining_ = true;
      maybe_finish();
      return;
    }
    if (stopping_ || draining_) {
      reply_and_close(sock, hello_reply{false, protocol_version(), getpid(), "the daemon is shutting down"});
      return;
    }
    if (sessions_.size() >= static_cast<std::size_t>(args_.max_sessions)) {
      spdlog::warn("daemon: refused the bridge of pid {}: {} session(s), the cap (--max-sessions)", h->pid,
                   sessions_.size());
      reply_and_close(sock, hello_reply{false, protocol_version(), getpid(),
                                        "refused: the daemon serves " + std::to_string(sessions_.size()) +
                                            " sessions already, its cap (--max-sessions)"});
      return;
    }
    // Send the reply synchronously: the session thread owns the socket next.
    boost::system::error_code ec;
    asio::write(*sock, asio::buffer(encode_reply(hello_reply{true, protocol_version(), getpid(), ""})), ec);
    if (ec) return;
    start_session(sock->release(), *h);
  }

  void start_session(int fd, const hello& h) {
    const std::uint64_t id = ++next_id_;
    idle_.cancel();
    session& s = sessions_[id];
    s.fd = fd;
    n_sessions_ = sessions_.size();
    spdlog::info("daemon: session {} (bridge pid {}) started; {} session(s)", id, h.pid, sessions_.size());
    s.thread = std::thread([this, fd, id, a = h.args] {
      stdio_options so = stdio_options_of(a);
      // The daemon's engines are shared: a session's provider comes from the pool.
      so.core.factory = [pool = &pool_, id](const provider_options& po, std::string* err) {
        return pool->acquire(id, po, err);
      };
      so.in_fd = fd;
      so.out_fd = fd;
      // The socket stays non-blocking (Asio's release()): the writer waits in
      // poll() for room, and drops a client that reads nothing for this long.
      so.write_timeout_ms = client_timeout_ms_;
      const int code = run_stdio_server(std::move(so), [this, id](lsp_server& server) {
        server.set_daemon_status([this, id] { return status_of(id); });
      });
      asio::post(io_, [this, id, code] { session_ended(id, code); });
    });
  }

  // quickfill/status's `daemon` for session `id`, on that session's thread.
  boost::json::value status_of(std::uint64_t id) const {
    return boost::json::object{{"pid", static_cast<std::int64_t>(getpid())},
                               {"socket", paths_.socket},
                               {"sessions", n_sessions_.load()},
                               {"engines", pool_.engines()},
                               {"sessionsOnEngine", pool_.sharing(id)}};
  }

  void session_ended(std::uint64_t id, int code) {
    auto it = sessions_.find(id);
    if (it == sessions_.end()) return;
    if (it->second.thread.joinable()) it->second.thread.join();
    ::close(it->second.fd);
    sessions_.erase(it);
    n_sessions_ = sessions_.size();
    spdlog::info("daemon: session {} ended (code {}); {} session(s), {} engine(s)", id, code, sessions_.size(),
                 pool_.engines());
    if (!maybe_finish()) arm_idle();
  }

  bool maybe_finish() {
    if (!sessions_.empty() || !(draining_ || stopping_)) return false;
    io_.stop();
    return true;
  }

  // The HTTP endpoint: a session of the engine pool of its own, for the
  // daemon's lifetime (it keeps the daemon from exiting when idle).
  bool start_http() {
    if (!http_) {
      spdlog::error("daemon: --http: this binary has no HTTP endpoint");
      return false;
    }
    const std::uint64_t id = ++next_id_;
    std::string error;
    stop_http_ = http_(io_,
                       [pool = &pool_, id](const provider_options& po, std::string* err) {
                         return pool->acquire(id, po, err);
                       },
                       args_, &error);
    if (!stop_http_) {
      spdlog::error("daemon: no HTTP endpoint: --http {}: {}", args_.http_listen, error);
      std::fprintf(stderr, "quickfill daemon: no HTTP endpoint: --http %s: %s\n", args_.http_listen.c_str(),
                   error.c_str());
      return false;
    }
    spdlog::info("daemon: serving HTTP on {} (engine session {})", args_.http_listen, id);
    return true;
  }

  void arm_idle() {
    if (!sessions_.empty() || stop_http_) return;
    idle_.expires_after(std::chrono::seconds(idle_s_));
    idle_.async_wait([this](const boost::system::error_code& ec) {
      if (ec || !sessions_.empty()) return;
      spdlog::info("daemon: no client for {} s; exiting", idle_s_);
      stopping_ = true;
      stop_listening();
      maybe_finish();
    });
  }

  server_args args_;
  http_service http_;
  std::function<void()> stop_http_;  // set while the HTTP endpoint runs
  socket_paths paths_;
  asio::io_context io_;
  local::acceptor acceptor_;
  asio::signal_set signals_;
  asio::steady_timer idle_;
  engine_pool pool_;
  int idle_s_ = 300;
  int client_timeout_ms_ = 60000;
  int handshaking_ = 0;
  dev_t sock_dev_ = 0;
  ino_t sock_ino_ = 0;
  std::map<std::uint64_t, session> sessions_;
  std::atomic<std::size_t> n_sessions_{0};  // sessions_.size(), for the sessions' threads
  std::uint64_t next_id_ = 0;
  bool draining_ = false, stopping_ = false;
};

}  // namespace

int run_daemon(const server_args& args, http_service http, engine_loaders engines) {
  socket_paths paths;
  std::string error;
  // The daemon outlives the directory it was started in (often a repository):
  // it works in / and nothing it opens is relative (clients send absolute paths).
  std::error_code cwd_ec;
  const std::string dir = std::filesystem::absolute(default_socket_dir(args.socket_dir), cwd_ec).string();
  if (::chdir("/") != 0) spdlog::warn("daemon: cannot change directory to /: {}", std::strerror(errno));
  if (!prepare_socket_dir(dir, paths, &error)) {
    spdlog::error("daemon: {}", error);
    std::fprintf(stderr, "quickfill daemon: %s\n", error.c_str());
    return 2;
  }
  daemon_server d(args, paths, std::move(http), std::move(engines));
  return d.run();
}

}  // namespace qf::server::daemon
