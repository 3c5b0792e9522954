// Test helper: a real llama-server (llama.cpp's, built by
// scripts/build_llama_server.sh into build/llama-server) on 127.0.0.1 with a
// free port, for the remote completion source's tests and benchmark. It is
// started with the given model and extra arguments, its output goes to a log
// file, and it is ready once GET /health answers 200. binary() is "" when it
// was not built (QUICKFILL_SKIP_LLAMA_SERVER=1): tests then GTEST_SKIP.
#pragma once

#include <signal.h>

#include <chrono>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "tests/server_process.h"

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
    return "llama-server is not built (scripts/build_llama_server.sh, run by the test setup.test_tools; it skips it with "
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
  std::string log() const { return file_text(log_); }
  void kill_now() { stop(SIGKILL); }
  void stop(int sig = SIGTERM) { stop_child(pid_, sig); }

  // A plain GET on the server, the body ("" when it cannot be had).
  std::string get(const std::string& path, int* status = nullptr) const { return loopback_get(port_, path, status); }

  static int free_port() { return free_loopback_port(); }

 private:
  void start(const std::string& model, const std::vector<std::string>& extra) {
    port_ = free_port();
    std::vector<std::string> argv{binary(), "-m", model, "--host", "127.0.0.1", "--port", std::to_string(port_)};
    argv.insert(argv.end(), extra.begin(), extra.end());
    const pid_t pid = spawn_child(argv, log_);
    if (pid < 0) {
      error_ = "cannot start " + argv[0];
      return;
    }
    pid_ = pid;
    for (int i = 0; i < 1500; ++i) {  // up to 30 s (model load on a busy machine)
      if (child_exited(pid)) {
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
