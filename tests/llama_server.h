// Test helper: a real llama-server (llama.cpp's, built by
// scripts/build_llama_server.sh into build/llama-server) on 127.0.0.1 with a
// free port, for the remote completion source's tests and benchmark. It is
// started with the given model and extra arguments, its output goes to a log
// file, and it is ready once GET /health answers 200. binary() is "" when it
// was not built (QUICKFILL_SKIP_LLAMA_SERVER=1): tests then GTEST_SKIP.
#pragma once

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

extern char** environ;

#include "tests/free_port.h"

namespace qf::test {

class llama_server {
 public:
  // $QUICKFILL_LLAMA_SERVER, else the path the build configured, when executable.
  static std::string binary() {
    std::vector<std::string> c;
    if (const char* e = std::getenv("QUICKFILL_LLAMA_SERVER")) c.push_back(e);
#ifdef QUICKFILL_LLAMA_SERVER_PATH
    c.push_back(QUICKFILL_LLAMA_SERVER_PATH);
#endif
    for (const auto& p : c)
      if (!p.empty() && ::access(p.c_str(), X_OK) == 0) return p;
    return {};
  }
  static std::string skip_reason() {
    return "llama-server is not built (scripts/build_llama_server.sh; setup skips it with "
           "QUICKFILL_SKIP_LLAMA_SERVER=1)";
  }

  llama_server(const std::string& model, std::vector<std::string> extra, const std::string& log_path)
      : log_(log_path) {
    for (int attempt = 0; attempt < 3 && pid_ <= 0; ++attempt) start(model, extra);
  }
  ~llama_server() { stop(); }
  llama_server(const llama_server&) = delete;
  llama_server& operator=(const llama_server&) = delete;

  bool ok() const { return pid_ > 0; }
  const std::string& error() const { return error_; }
  int port() const { return port_; }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  std::string log() const {
    std::ifstream in(log_);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }
  void kill_now() { stop(SIGKILL); }
  void stop(int sig = SIGTERM) {
    if (pid_ <= 0) return;
    ::kill(pid_, sig);
    int st = 0;
    ::waitpid(pid_, &st, 0);
    pid_ = -1;
  }

  // A plain GET on the server, the body ("" when it cannot be had).
  std::string get(const std::string& path, int* status = nullptr) const {
    int s = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(static_cast<uint16_t>(port_));
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    std::string got;
    if (::connect(s, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0) {
      const std::string req = "GET " + path + " HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n";
      if (::write(s, req.data(), req.size()) == static_cast<ssize_t>(req.size())) {
        char buf[4096];
        for (ssize_t n; (n = ::read(s, buf, sizeof buf)) > 0;) got.append(buf, static_cast<size_t>(n));
      }
    }
    ::close(s);
    if (status) *status = got.size() > 12 && got.rfind("HTTP/1.", 0) == 0 ? std::atoi(got.c_str() + 9) : 0;
    const auto body = got.find("\r\n\r\n");
    return body == std::string::npos ? std::string() : got.substr(body + 4);
  }

  static int free_port() { return free_loopback_port(); }

 private:
  void start(const std::string& model, const std::vector<std::string>& extra) {
    port_ = free_port();
    std::vector<std::string> argv{binary(), "-m", model, "--host", "127.0.0.1", "--port", std::to_string(port_)};
    argv.insert(argv.end(), extra.begin(), extra.end());
    std::vector<char*> args;
    for (auto& a : argv) args.push_back(a.data());
    args.push_back(nullptr);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, log_.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    posix_spawn_file_actions_adddup2(&fa, 1, 2);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    pid_t pid = 0;
    const int rc = ::posix_spawn(&pid, args[0], &fa, nullptr, args.data(), environ);
    posix_spawn_file_actions_destroy(&fa);
    if (rc != 0) {
      error_ = "cannot start " + argv[0];
      return;
    }
    pid_ = pid;
    for (int i = 0; i < 1500; ++i) {  // up to 30 s (model load on a busy machine)
      int st = 0;
      if (::waitpid(pid, &st, WNOHANG) == pid) {
        pid_ = -1;
        error_ = "llama-server exited while starting; its log:\n" + log();
        return;
      }
      int status = 0;
      get("/health", &status);
      if (status == 200) return;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    stop(SIGKILL);
    error_ = "llama-server did not become ready on port " + std::to_string(port_) + "; its log:\n" + log();
  }

  std::string log_;
  int port_ = 0;
  pid_t pid_ = -1;
  std::string error_;
};

}  // namespace qf::test
