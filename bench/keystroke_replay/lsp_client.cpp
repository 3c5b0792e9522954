// Process + framing for the benchmark LSP client (see the header).
#include "bench/keystroke_replay/lsp_client.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <stdexcept>

namespace qf::bench {
namespace json = boost::json;

lsp_client::lsp_client(const std::vector<std::string>& argv, const std::string& stderr_path) {
  int in[2], out[2];
  if (pipe(in) != 0 || pipe(out) != 0) throw std::runtime_error("pipe failed");
  pid_ = fork();
  if (pid_ < 0) throw std::runtime_error("fork failed");
  if (pid_ == 0) {
    dup2(in[0], 0);
    dup2(out[1], 1);
    if (!stderr_path.empty()) {
      int fd = open(stderr_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      if (fd >= 0) dup2(fd, 2);
    }
    close(in[0]);
    close(in[1]);
    close(out[0]);
    close(out[1]);
    std::vector<char*> args;
    for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    execv(args[0], args.data());
    std::perror("execv");
    _exit(127);
  }
  close(in[0]);
  close(out[1]);
  to_child_ = in[1];
  from_child_ = out[0];
  reader_ = std::thread([this] { read_loop(); });
}

lsp_client::~lsp_client() {
  if (to_child_ >= 0) close(to_child_);
  int status = 0;
  // Give the server a moment to exit after `exit`/EOF, then stop it.
  for (int i = 0; i < 50; ++i) {
    if (waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      break;
    }
    usleep(20000);
  }
  if (pid_ > 0) {
    kill(pid_, SIGTERM);
    waitpid(pid_, &status, 0);
  }
  if (reader_.joinable()) reader_.join();
  if (from_child_ >= 0) close(from_child_);
}

void lsp_client::send(const json::value& msg) {
  std::string body = json::serialize(msg);
  std::string frame = "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
  std::lock_guard<std::mutex> lk(write_mu_);
  size_t off = 0;
  while (off < frame.size()) {
    ssize_t n = write(to_child_, frame.data() + off, frame.size() - off);
    if (n <= 0) return;
    off += static_cast<size_t>(n);
  }
}

int64_t lsp_client::request(const std::string& method, json::value params) {
  int64_t id = next_id_++;
  send(json::object{{"jsonrpc", "2.0"}, {"id", id}, {"method", method}, {"params", std::move(params)}});
  return id;
}

void lsp_client::notify(const std::string& method, json::value params) {
  send(json::object{{"jsonrpc", "2.0"}, {"method", method}, {"params", std::move(params)}});
}

bool lsp_client::wait(int64_t id, std::chrono::milliseconds timeout) {
  std::unique_lock<std::mutex> lk(mu_);
  return cv_.wait_for(lk, timeout, [&] { return eof_ || replies_.count(id); }) && replies_.count(id);
}

std::optional<reply> lsp_client::get(int64_t id) {
  std::lock_guard<std::mutex> lk(mu_);
  auto it = replies_.find(id);
  if (it == replies_.end()) return std::nullopt;
  return it->second;
}

void lsp_client::read_loop() {
  std::string buf;
  char chunk[65536];
  for (;;) {
    // Parse as many complete frames as the buffer holds.
    for (;;) {
      size_t hdr_end = buf.find("\r\n\r\n");
      if (hdr_end == std::string::npos) break;
      size_t cl = buf.find("Content-Length:");
      if (cl == std::string::npos || cl > hdr_end) {
        buf.erase(0, hdr_end + 4);
        continue;
      }
      size_t len = std::strtoul(buf.c_str() + cl + 15, nullptr, 10);
      if (buf.size() < hdr_end + 4 + len) break;
      std::string body = buf.substr(hdr_end + 4, len);
      buf.erase(0, hdr_end + 4 + len);
      const auto now = bclock::now();
      boost::system::error_code ec;
      json::value v = json::parse(body, ec);
      if (ec || !v.is_object()) continue;
      json::object& o = v.as_object();
      const bool has_method = o.contains("method");
      if (o.contains("id") && !has_method) {
        const json::value& idv = o.at("id");
        if (idv.is_int64()) {
          std::lock_guard<std::mutex> lk(mu_);
          replies_[idv.as_int64()] = reply{now, std::move(v)};
        }
        cv_.notify_all();
      } else if (o.contains("id") && has_method) {
        send(json::object{{"jsonrpc", "2.0"}, {"id", o.at("id")}, {"result", nullptr}});
      }
    }
    ssize_t n = read(from_child_, chunk, sizeof chunk);
    if (n <= 0) break;
    buf.append(chunk, static_cast<size_t>(n));
  }
  std::lock_guard<std::mutex> lk(mu_);
  eof_ = true;
  cv_.notify_all();
}

}  // namespace qf::bench
