// Test helper: the parts every real server a test starts on 127.0.0.1 shares
// (nginx_server.h, llama_server.h): a port that was free a moment ago, a
// child started with its output in a log file, a plain HTTP/1.0 GET on the
// loopback, and stopping the child. A free port may be taken by another
// process before the server binds it: callers retry.
#pragma once

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

extern char** environ;

namespace qf::test {

// Bound to port 0 and released.
inline int free_loopback_port() {
  int s = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  ::bind(s, reinterpret_cast<sockaddr*>(&a), sizeof a);
  ::getsockname(s, reinterpret_cast<sockaddr*>(&a), &len);
  ::close(s);
  return ntohs(a.sin_port);
}

// A connected socket to 127.0.0.1:port, or -1.
inline int connect_loopback(int port) {
  int s = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(s, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0) return s;
  ::close(s);
  return -1;
}

// GET path over plain HTTP/1.0: the body ("" when none could be had) and, in
// *status, the status code (0 when no HTTP answer came).
inline std::string loopback_get(int port, const std::string& path, int* status = nullptr) {
  std::string got;
  if (const int s = connect_loopback(port); s >= 0) {
    const std::string req = "GET " + path + " HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n";
    if (::write(s, req.data(), req.size()) == static_cast<ssize_t>(req.size())) {
      char buf[4096];
      for (ssize_t n; (n = ::read(s, buf, sizeof buf)) > 0;) got.append(buf, static_cast<size_t>(n));
    }
    ::close(s);
  }
  if (status) *status = got.size() > 12 && got.rfind("HTTP/1.", 0) == 0 ? std::atoi(got.c_str() + 9) : 0;
  const auto body = got.find("\r\n\r\n");
  return body == std::string::npos ? std::string() : got.substr(body + 4);
}

inline std::string file_text(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// argv[0] started with stdin from /dev/null and, when log_path is set,
// stdout and stderr appended to it; its pid, or -1.
inline pid_t spawn_child(std::vector<std::string> argv, const std::string& log_path) {
  std::vector<char*> args;
  for (auto& a : argv) args.push_back(a.data());
  args.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  if (!log_path.empty()) {
    posix_spawn_file_actions_addopen(&fa, 1, log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    posix_spawn_file_actions_adddup2(&fa, 1, 2);
  }
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  pid_t pid = 0;
  const int rc = ::posix_spawn(&pid, args[0], &fa, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  return rc == 0 ? pid : -1;
}

// Whether the child has exited (and is reaped).
inline bool child_exited(pid_t pid) {
  int st = 0;
  return ::waitpid(pid, &st, WNOHANG) == pid;
}

// Signals the child and reaps it; pid becomes -1.
inline void stop_child(pid_t& pid, int sig) {
  if (pid <= 0) return;
  ::kill(pid, sig);
  int st = 0;
  ::waitpid(pid, &st, 0);
  pid = -1;
}

}  // namespace qf::test
