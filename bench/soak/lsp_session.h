// A thin synchronous layer over the project's LSP client (a child process on
// pipes) for the drivers in this folder: send a request and wait for its
// reply, answering requests from the server (progress creation) with null and
// dropping its notifications on the way. The only client calls used are
// start / request / send / next / wait_exit / kill_child / pid.
#pragma once

#include <cinttypes>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <unistd.h>

#include <boost/json.hpp>

#include "lsp/client/lsp_client.h"

namespace qf::bench {

class lsp_session {
 public:
  bool start(const std::vector<std::string>& argv, const std::string& stderr_path, std::string* error) {
    lsp::client_options opts;
    opts.stderr_path = stderr_path;
    return client_.start(argv, opts, error);
  }
  int pid() const { return static_cast<int>(client_.pid()); }

  int64_t request(const std::string& method, boost::json::value params) {
    return client_.request(method, std::move(params));
  }
  void notify(const std::string& method, boost::json::value params) {
    client_.send(boost::json::object{{"jsonrpc", "2.0"}, {"method", method}, {"params", std::move(params)}});
  }
  // The response to `id` (result or error), or nullopt after `timeout` or at
  // the end of the server's output. Replies to other ids are dropped.
  std::optional<boost::json::value> wait(int64_t id, std::chrono::milliseconds timeout) {
    const auto until = std::chrono::steady_clock::now() + timeout;
    for (;;) {
      const auto now = std::chrono::steady_clock::now();
      if (now >= until) return std::nullopt;
      std::optional<lsp::received_message> r =
          client_.next(std::chrono::duration_cast<std::chrono::milliseconds>(until - now));
      if (!r) return std::nullopt;
      std::optional<boost::json::value> m = std::move(r->body);
      if (!m->is_object()) continue;
      const boost::json::object& o = m->as_object();
      if (o.contains("method")) {
        if (o.contains("id"))
          client_.send(boost::json::object{{"jsonrpc", "2.0"}, {"id", o.at("id")}, {"result", nullptr}});
        continue;
      }
      if (const boost::json::value* v = o.if_contains("id"); v && v->is_int64() && v->get_int64() == id) return m;
    }
  }
  std::optional<boost::json::value> call(const std::string& method, boost::json::value params,
                                         std::chrono::milliseconds timeout) {
    return wait(request(method, std::move(params)), timeout);
  }
  // shutdown + exit; the server's exit code, or -1 when it did not exit in time.
  int finish(std::chrono::milliseconds timeout) {
    call("shutdown", nullptr, timeout);
    notify("exit", nullptr);
    bool timed_out = false;
    int code = client_.wait_exit(timeout, &timed_out);
    if (timed_out) {
      client_.kill_child();
      client_.wait_exit(timeout, &timed_out);
      return -1;
    }
    return code;
  }

 private:
  lsp::lsp_client client_;
};

// VmRSS of a process in KiB (/proc/PID/status), or -1.
inline int64_t rss_kib(int pid) {
  std::FILE* f = std::fopen(("/proc/" + std::to_string(pid) + "/status").c_str(), "r");
  if (!f) return -1;
  char line[256];
  int64_t kib = -1;
  while (std::fgets(line, sizeof line, f))
    if (std::sscanf(line, "VmRSS: %" SCNd64, &kib) == 1) break;
  std::fclose(f);
  return kib;
}

// CPU time (user + system, all threads) of a process in milliseconds
// (/proc/PID/stat, clock-tick resolution), or -1.
inline double cpu_ms(int pid) {
  std::FILE* f = std::fopen(("/proc/" + std::to_string(pid) + "/stat").c_str(), "r");
  if (!f) return -1;
  char buf[1024];
  const size_t n = std::fread(buf, 1, sizeof buf - 1, f);
  std::fclose(f);
  buf[n] = 0;
  const char* p = std::strrchr(buf, ')');  // the command name may hold spaces
  if (!p) return -1;
  unsigned long long ut = 0, st = 0;
  // Fields after the name: state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt utime stime.
  if (std::sscanf(p + 1, " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &ut, &st) != 2) return -1;
  return static_cast<double>(ut + st) * 1000.0 / static_cast<double>(::sysconf(_SC_CLK_TCK));
}

}  // namespace qf::bench
