// Test helper: the real `quickfill serve --http 127.0.0.1:PORT` (server/cli/
// cmd_serve.cpp) as a child process on a free loopback port, with the given
// model and extra arguments, its output in a log file; ready once GET /health
// answers 200 (the model is loaded). For the HTTP endpoint's tests and
// benchmark (tests/server/http, bench/http).
#pragma once

#include <signal.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "tests/server_process.h"

namespace qf::test {

class quickfill_serve {
 public:
  quickfill_serve(const std::string& binary, const std::string& model, std::vector<std::string> extra,
                  const std::string& log_path)
      : log_(log_path) {
    for (int attempt = 0; attempt < 3 && pid_ <= 0; ++attempt) start(binary, model, extra);
  }
  ~quickfill_serve() { stop(); }
  quickfill_serve(const quickfill_serve&) = delete;
  quickfill_serve& operator=(const quickfill_serve&) = delete;

  bool ok() const { return pid_ > 0; }
  const std::string& error() const { return error_; }
  int port() const { return port_; }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  std::string log() const { return file_text(log_); }
  void stop(int sig = SIGTERM) { stop_child(pid_, sig); }
  bool running() const { return pid_ > 0 && !child_exited(pid_); }
  std::string get(const std::string& path, int* status = nullptr) const { return loopback_get(port_, path, status); }

 private:
  void start(const std::string& binary, const std::string& model, const std::vector<std::string>& extra) {
    port_ = free_loopback_port();
    std::vector<std::string> argv{binary, "serve", "--http", "127.0.0.1:" + std::to_string(port_), "--config", "none"};
    if (!model.empty()) argv.insert(argv.end(), {"--model", model});
    argv.insert(argv.end(), extra.begin(), extra.end());
    const pid_t pid = spawn_child(argv, log_);
    if (pid < 0) {
      error_ = "cannot start " + binary;
      return;
    }
    pid_ = pid;
    for (int i = 0; i < 3000; ++i) {  // up to 60 s (model load on a busy machine)
      if (child_exited(pid)) {
        pid_ = -1;
        error_ = "quickfill serve exited while starting; its log:\n" + log();
        return;
      }
      int status = 0;
      get("/health", &status);
      if (status == 200) return;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    error_ = "quickfill serve did not answer /health with 200 in time; its log:\n" + log();
    stop(SIGKILL);
  }

  std::string log_;
  std::string error_;
  int port_ = 0;
  pid_t pid_ = -1;
};

}  // namespace qf::test
