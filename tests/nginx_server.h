// Test helper: a real nginx (Debian's package, see scripts/setup-tests.sh) serving a
// folder on 127.0.0.1 with a generated configuration, for the HTTP client and
// `quickfill model pull` tests. It runs in the foreground as one process
// (master_process off) so stopping it is one signal, and logs every request as
//   METHOD URI "RANGE" "IF-RANGE" "AUTHORIZATION" STATUS BODY_BYTES_SENT
// to access.log, which tests read to see what went over the wire.
// binary() is "" when nginx is not installed: tests then GTEST_SKIP.
#pragma once

#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "tests/server_process.h"

namespace qf::test {

class nginx_server {
 public:
  static std::string binary() {
    for (const char* p : {"/usr/sbin/nginx", "/usr/local/sbin/nginx", "/usr/bin/nginx"})
      if (::access(p, X_OK) == 0) return p;
    return {};
  }

  // Serves `dir`/www with the `locations` text inside the server block; with
  // tls_cert/tls_key set, over HTTPS. port 0 picks a free one.
  nginx_server(std::string dir, std::string locations, int port = 0, std::string tls_cert = {},
               std::string tls_key = {})
      : dir_(std::move(dir)), locations_(std::move(locations)), cert_(std::move(tls_cert)), key_(std::move(tls_key)) {
    std::filesystem::create_directories(dir_ + "/www");
    std::filesystem::create_directories(dir_ + "/tmp");
    for (int attempt = 0; attempt < 5 && pid_ <= 0; ++attempt) start(port != 0 ? port : free_port());
  }
  ~nginx_server() { stop(); }
  nginx_server(const nginx_server&) = delete;
  nginx_server& operator=(const nginx_server&) = delete;

  bool ok() const { return pid_ > 0; }
  const std::string& error() const { return error_; }
  int port() const { return port_; }
  std::string www() const { return dir_ + "/www"; }
  std::string url(const std::string& path) const {
    return std::string(cert_.empty() ? "http" : "https") + "://127.0.0.1:" + std::to_string(port_) + path;
  }
  std::vector<std::string> access_log() const {
    std::ifstream in(dir_ + "/access.log");
    std::vector<std::string> lines;
    for (std::string l; std::getline(in, l);) lines.push_back(l);
    return lines;
  }
  // The logged lines that begin with `prefix` (e.g. "GET /loop "). nginx writes
  // a request's line after its response went out, so a client can see the
  // answer before the line is there: the log is read again (up to `wait`)
  // until at least `at_least` lines match.
  std::vector<std::string> logged(const std::string& prefix, size_t at_least = 1,
                                  std::chrono::milliseconds wait = std::chrono::seconds(2)) const {
    const auto until = std::chrono::steady_clock::now() + wait;
    for (;;) {
      std::vector<std::string> out;
      for (auto& l : access_log())
        if (l.rfind(prefix, 0) == 0) out.push_back(std::move(l));
      if (out.size() >= at_least || std::chrono::steady_clock::now() >= until) return out;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  }
  // SIGKILL: every open connection is cut at once, mid-body or not.
  void kill_now() { stop(SIGKILL); }
  void stop(int sig = SIGTERM) { stop_child(pid_, sig); }

 private:
  static int free_port() { return free_loopback_port(); }

  // Something accepts on the port; with `token`, it also serves
  // /.qf-server-id over plain HTTP with the token in it, so a server of
  // another test that happens to hold the port is not taken for this one.
  static bool answers(int port, const std::string& token) {
    if (token.empty()) {
      const int s = connect_loopback(port);
      if (s >= 0) ::close(s);
      return s >= 0;
    }
    return loopback_get(port, "/.qf-server-id").find(token) != std::string::npos;
  }

  void start(int port) {
    port_ = port;
    const std::string token = "qf-" + std::to_string(::getpid()) + "-" + std::to_string(port) + "-" +
                              std::to_string(std::chrono::steady_clock::now().time_since_epoch().count());
    if (cert_.empty()) std::ofstream(dir_ + "/www/.qf-server-id") << token;
    const std::string conf = dir_ + "/nginx.conf";
    {
      std::ofstream c(conf, std::ios::trunc);
      if (::geteuid() == 0) c << "user root;\n";
      c << "daemon off;\nmaster_process off;\nworker_processes 1;\n"
        << "pid " << dir_ << "/nginx.pid;\n"
        << "error_log " << dir_ << "/error.log info;\n"
        << "events { worker_connections 64; }\n"
        << "http {\n"
        << "  log_format qf '$request_method $uri \"$http_range\" \"$http_if_range\" \"$http_authorization\" $status "
           "$body_bytes_sent';\n"
        << "  access_log " << dir_ << "/access.log qf;\n"
        << "  client_body_temp_path " << dir_ << "/tmp/body;\n"
        << "  proxy_temp_path " << dir_ << "/tmp/proxy;\n"
        << "  fastcgi_temp_path " << dir_ << "/tmp/fastcgi;\n"
        << "  uwsgi_temp_path " << dir_ << "/tmp/uwsgi;\n"
        << "  scgi_temp_path " << dir_ << "/tmp/scgi;\n"
        << "  default_type application/octet-stream;\n"
        << "  server {\n"
        << "    listen 127.0.0.1:" << port << (cert_.empty() ? "" : " ssl") << ";\n";
      if (!cert_.empty()) c << "    ssl_certificate " << cert_ << ";\n    ssl_certificate_key " << key_ << ";\n";
      c << "    root " << dir_ << "/www;\n" << locations_ << "\n  }\n}\n";
    }
    pid_t pid = spawn_child({binary(), "-p", dir_ + "/", "-c", conf, "-e", dir_ + "/error.log"}, {});
    if (pid < 0) {
      error_ = "cannot start " + binary();
      return;
    }
    for (int i = 0; i < 500; ++i) {  // up to 10 s
      if (child_exited(pid)) {
        error_ = "nginx exited: " + file_text(dir_ + "/error.log");
        return;
      }
      if (answers(port, cert_.empty() ? token : std::string())) {
        pid_ = pid;
        return;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    stop_child(pid, SIGKILL);
    error_ = "nginx did not answer on port " + std::to_string(port);
  }

  std::string dir_, locations_, cert_, key_;
  int port_ = 0;
  pid_t pid_ = -1;
  std::string error_;
};

}  // namespace qf::test
