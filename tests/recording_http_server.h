// Test helper: a small real HTTP/1.1 server on a loopback address that
// records every request it receives (request line, headers, body) and answers
// each path with what the test set (a status, headers such as a Location,
// a body; 200 "ok" by default). It binds port 0, so the port is its own from
// the start, and can bind any address of 127.0.0.0/8 (127.0.0.2 plays
// "another host" on one machine). One request per connection (it answers with
// Connection: close), one connection at a time. For the HTTP client's
// redirect and credential rules and the remote sources' metering: what
// reached which origin is read from requests().
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cctype>
#include <chrono>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace qf::test {

struct recorded_request {
  std::string method, target;
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;

  // The first header of this name (case-insensitive), or nullptr.
  const std::string* header(const std::string& name) const {
    for (const auto& [k, v] : headers) {
      if (k.size() != name.size()) continue;
      bool same = true;
      for (size_t i = 0; i < k.size() && same; ++i)
        same = std::tolower(static_cast<unsigned char>(k[i])) == std::tolower(static_cast<unsigned char>(name[i]));
      if (same) return &v;
    }
    return nullptr;
  }
};

struct canned_response {
  int status = 200;
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body = "ok";
  bool content_length = true;  // false: the body ends when the connection closes
  bool hold_open = false;      // after the body, wait (up to 30 s) for the client to close: a stalled stream
};

class recording_http_server {
 public:
  explicit recording_http_server(const std::string& address = "127.0.0.1") : address_(address) {
    fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    ::inet_pton(AF_INET, address.c_str(), &a.sin_addr);
    socklen_t len = sizeof a;
    if (fd_ < 0 || ::bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 || ::listen(fd_, 16) != 0 ||
        ::getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len) != 0) {
      error_ = "cannot listen on " + address;
      return;
    }
    port_ = ntohs(a.sin_port);
    thread_ = std::thread([this] { serve(); });
  }
  ~recording_http_server() {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
    if (fd_ >= 0) ::close(fd_);
  }
  recording_http_server(const recording_http_server&) = delete;
  recording_http_server& operator=(const recording_http_server&) = delete;

  bool ok() const { return port_ > 0; }
  const std::string& error() const { return error_; }
  int port() const { return port_; }
  std::string origin() const { return "http://" + address_ + ":" + std::to_string(port_); }
  std::string url(const std::string& path) const { return origin() + path; }

  void answer(const std::string& path, canned_response r) {
    std::lock_guard<std::mutex> lock(mu_);
    routes_[path] = std::move(r);
  }
  void redirect(const std::string& path, int status, const std::string& location) {
    canned_response r;
    r.status = status;
    r.headers.push_back({"Location", location});
    r.body.clear();
    answer(path, std::move(r));
  }

  // Held-open answers whose client closed the connection (or that ran out).
  int held_closed() const {
    std::lock_guard<std::mutex> lock(mu_);
    return closed_by_client_;
  }

  std::vector<recorded_request> requests() const {
    std::lock_guard<std::mutex> lock(mu_);
    return requests_;
  }
  // The requests so far, waiting (up to `wait`) until there are at least n.
  std::vector<recorded_request> wait_for(size_t n, std::chrono::milliseconds wait = std::chrono::seconds(5)) const {
    const auto until = std::chrono::steady_clock::now() + wait;
    for (;;) {
      auto r = requests();
      if (r.size() >= n || std::chrono::steady_clock::now() >= until) return r;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  }

 private:
  void serve() {
    while (!stop_) {
      pollfd p{fd_, POLLIN, 0};
      if (::poll(&p, 1, 20) <= 0) continue;
      const int c = ::accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC);
      if (c < 0) continue;
      handle(c);
      ::close(c);
    }
  }

  // Reads until `done` says the buffer holds enough, the peer closes, or 5 s pass.
  template <class Done>
  static bool read_until(int c, std::string& buf, Done done) {
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while (!done()) {
      pollfd p{c, POLLIN, 0};
      if (std::chrono::steady_clock::now() >= until) return false;
      if (::poll(&p, 1, 20) <= 0) continue;
      char tmp[16384];
      const ssize_t n = ::read(c, tmp, sizeof tmp);
      if (n <= 0) return false;
      buf.append(tmp, static_cast<size_t>(n));
    }
    return true;
  }

  void handle(int c) {
    std::string buf;
    if (!read_until(c, buf, [&] { return buf.find("\r\n\r\n") != std::string::npos; })) return;
    const size_t head_end = buf.find("\r\n\r\n");
    recorded_request req;
    size_t line_end = buf.find("\r\n");
    const std::string line = buf.substr(0, line_end);
    const size_t sp1 = line.find(' '), sp2 = line.find(' ', sp1 + 1);
    req.method = line.substr(0, sp1);
    req.target = line.substr(sp1 + 1, sp2 - sp1 - 1);
    for (size_t at = line_end + 2; at < head_end;) {
      const size_t e = buf.find("\r\n", at);
      const std::string h = buf.substr(at, e - at);
      const size_t colon = h.find(':');
      std::string v = colon == std::string::npos ? "" : h.substr(colon + 1);
      while (!v.empty() && v.front() == ' ') v.erase(0, 1);
      req.headers.push_back({h.substr(0, colon), v});
      at = e + 2;
    }
    size_t want = 0;
    if (const std::string* cl = req.header("Content-Length")) want = std::stoul(*cl);
    read_until(c, buf, [&] { return buf.size() >= head_end + 4 + want; });
    req.body = buf.substr(head_end + 4, want);
    canned_response r;
    {
      std::lock_guard<std::mutex> lock(mu_);
      requests_.push_back(req);
      const std::string path = req.target.substr(0, req.target.find('?'));
      if (auto it = routes_.find(path); it != routes_.end()) r = it->second;
    }
    std::string out = "HTTP/1.1 " + std::to_string(r.status) + " Canned\r\nConnection: close\r\n";
    for (const auto& [k, v] : r.headers) out += k + ": " + v + "\r\n";
    if (r.content_length) out += "Content-Length: " + std::to_string(r.body.size()) + "\r\n";
    out += "\r\n" + r.body;
    for (size_t sent = 0; sent < out.size();) {
      const ssize_t n = ::send(c, out.data() + sent, out.size() - sent, MSG_NOSIGNAL);
      if (n <= 0) break;
      sent += static_cast<size_t>(n);
    }
    if (r.hold_open) {
      const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(30);
      char tmp[256];
      while (!stop_ && std::chrono::steady_clock::now() < until) {
        pollfd p{c, POLLIN, 0};
        if (::poll(&p, 1, 20) > 0 && ::read(c, tmp, sizeof tmp) <= 0) break;  // the client closed
      }
      std::lock_guard<std::mutex> lock(mu_);
      ++closed_by_client_;
    }
  }

  std::string address_;
  int fd_ = -1;
  int port_ = 0;
  std::string error_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
  mutable std::mutex mu_;
  std::map<std::string, canned_response> routes_;
  std::vector<recorded_request> requests_;
  int closed_by_client_ = 0;
};

}  // namespace qf::test
