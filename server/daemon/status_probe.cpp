// The daemon's status line, both sides (see the header).
#include "server/daemon/status_probe.h"

#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>

#include <boost/json.hpp>

namespace qf::server::daemon {

namespace json = boost::json;

bool is_status_probe(const std::string& line) {
  if (line.size() > 256) return false;
  boost::system::error_code ec;
  json::value v = json::parse(line, ec);
  if (ec || !v.is_object()) return false;
  const json::value* q = v.as_object().if_contains("quickfill");
  return q && q->is_string() && q->as_string() == "status";
}

std::string encode_status(const daemon_status& s) {
  return json::serialize(json::object{{"ok", true},
                                      {"version", s.version},
                                      {"pid", s.pid},
                                      {"sessions", s.sessions},
                                      {"engines", s.engines},
                                      {"socket", s.socket}}) +
         "\n";
}

namespace {

struct fd_closer {
  int fd;
  ~fd_closer() {
    if (fd >= 0) ::close(fd);
  }
};

// Waits for `events` on fd until the deadline; false on timeout or error.
bool wait_for(int fd, short events, std::chrono::steady_clock::time_point deadline) {
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return false;
    pollfd p{fd, events, 0};
    const int r = ::poll(&p, 1, static_cast<int>(left.count()));
    if (r > 0) return true;
    if (r < 0 && errno != EINTR) return false;
  }
}

}  // namespace

std::optional<daemon_status> probe_daemon(const std::string& socket_path, int timeout_ms, std::string* error) {
  auto fail = [&](const std::string& why) -> std::optional<daemon_status> {
    if (error) *error = why;
    return std::nullopt;
  };
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (socket_path.size() >= sizeof(addr.sun_path)) return fail("the socket path is too long");
  std::memcpy(addr.sun_path, socket_path.c_str(), socket_path.size() + 1);
  fd_closer s{::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0)};
  if (s.fd < 0) return fail(std::string("socket: ") + std::strerror(errno));
  if (::connect(s.fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 && errno != EINPROGRESS &&
      errno != EAGAIN)
    return fail(std::string("no daemon is listening (") + std::strerror(errno) + ")");
  ucred peer{};
  socklen_t len = sizeof peer;
  if (::getsockopt(s.fd, SOL_SOCKET, SO_PEERCRED, &peer, &len) != 0) return fail("cannot tell who listens there");
  if (peer.uid != ::getuid()) return fail("the socket belongs to another user (uid " + std::to_string(peer.uid) + ")");
  const std::string probe = "{\"quickfill\":\"status\"}\n";
  for (size_t sent = 0; sent < probe.size();) {
    if (!wait_for(s.fd, POLLOUT, deadline)) return fail("the daemon did not take the request in time");
    const ssize_t n = ::send(s.fd, probe.data() + sent, probe.size() - sent, MSG_NOSIGNAL);
    if (n < 0 && errno != EAGAIN && errno != EINTR) return fail(std::string("send: ") + std::strerror(errno));
    if (n > 0) sent += static_cast<size_t>(n);
  }
  std::string line;
  char buf[512];
  while (line.find('\n') == std::string::npos) {
    if (line.size() > 4096) return fail("the daemon's answer is too long");
    if (!wait_for(s.fd, POLLIN, deadline)) return fail("the daemon did not answer within " + std::to_string(timeout_ms) + " ms");
    const ssize_t n = ::recv(s.fd, buf, sizeof buf, 0);
    if (n == 0) return fail("the daemon closed the connection without an answer (an older version?)");
    if (n < 0 && errno != EAGAIN && errno != EINTR) return fail(std::string("recv: ") + std::strerror(errno));
    if (n > 0) line.append(buf, static_cast<size_t>(n));
  }
  line.resize(line.find('\n'));
  boost::system::error_code ec;
  json::value v = json::parse(line, ec);
  if (ec || !v.is_object()) return fail("the daemon's answer is not JSON");
  const json::object& o = v.as_object();
  const json::value* ok = o.if_contains("ok");
  if (!ok || !ok->is_bool() || !ok->as_bool()) {
    const json::value* e = o.if_contains("error");
    return fail("the daemon refused: " + (e && e->is_string() ? std::string(e->as_string()) : std::string("?")));
  }
  daemon_status st;
  auto str = [&](const char* k) {
    const json::value* x = o.if_contains(k);
    return x && x->is_string() ? std::string(x->as_string()) : std::string();
  };
  auto num = [&](const char* k) -> long {
    const json::value* x = o.if_contains(k);
    return x && x->is_int64() ? static_cast<long>(x->as_int64()) : 0;
  };
  st.version = str("version");
  st.socket = str("socket");
  st.pid = num("pid");
  st.sessions = num("sessions");
  st.engines = num("engines");
  return st;
}

}  // namespace qf::server::daemon
