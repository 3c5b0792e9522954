// Child-process LSP client (see lsp_client.h).
#include "server/cli/lsp_client.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <boost/json.hpp>

#include "lsp/transport.h"

namespace qf::cli {

namespace json = boost::json;

lsp_client::~lsp_client() {
  close_stdin();
  if (pid_ > 0 && !reaped_) {
    bool timed_out = false;
    wait_exit(std::chrono::milliseconds(3000), &timed_out);
    if (timed_out) {
      kill_child();
      wait_exit(std::chrono::milliseconds(3000), &timed_out);
    }
  }
  if (reader_.joinable()) reader_.join();
  if (from_child_ >= 0) ::close(from_child_);
}

bool lsp_client::start(const std::vector<std::string>& argv, const std::string& stderr_path, std::string* error) {
  int in_pipe[2], out_pipe[2];
  if (::pipe2(in_pipe, O_CLOEXEC) != 0 || ::pipe2(out_pipe, O_CLOEXEC) != 0) {
    *error = std::string("pipe: ") + std::strerror(errno);
    return false;
  }
  int err_fd = -1;
  if (!stderr_path.empty()) {
    err_fd = ::open(stderr_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (err_fd < 0) {
      *error = "cannot open " + stderr_path + ": " + std::strerror(errno);
      return false;
    }
  }
  std::vector<char*> cargv;
  for (const auto& a : argv) cargv.push_back(const_cast<char*>(a.c_str()));
  cargv.push_back(nullptr);
  pid_t pid = ::fork();
  if (pid < 0) {
    *error = std::string("fork: ") + std::strerror(errno);
    return false;
  }
  if (pid == 0) {
    ::dup2(in_pipe[0], 0);
    ::dup2(out_pipe[1], 1);
    if (err_fd >= 0) ::dup2(err_fd, 2);
    ::signal(SIGPIPE, SIG_DFL);
    ::execv(cargv[0], cargv.data());
    std::fprintf(stderr, "exec %s: %s\n", cargv[0], std::strerror(errno));
    ::_exit(127);
  }
  if (err_fd >= 0) ::close(err_fd);
  ::close(in_pipe[0]);
  ::close(out_pipe[1]);
  pid_ = pid;
  to_child_ = in_pipe[1];
  from_child_ = out_pipe[0];
  reader_ = std::thread([this] { reader_main(); });
  return true;
}

void lsp_client::reader_main() {
  lsp::fd_reader reader(from_child_, std::size_t(1) << 30);
  for (;;) {
    lsp::read_result r = reader.read_message();
    std::lock_guard<std::mutex> lock(mu_);
    if (r.what == lsp::read_result::kind::message) {
      boost::system::error_code ec;
      json::value v = json::parse(r.body, ec);
      if (ec)
        bad_.push_back("unparsable message: " + r.body.substr(0, 200));
      else
        inbox_.push_back(std::move(v));
    } else if (r.what == lsp::read_result::kind::bad_header || r.what == lsp::read_result::kind::too_large) {
      bad_.push_back(r.error);
    } else {
      if (!r.error.empty()) bad_.push_back(r.error);
      closed_ = true;
      cv_.notify_all();
      return;
    }
    cv_.notify_all();
  }
}

bool lsp_client::send(const json::value& message) { return send_raw(lsp::frame_message(json::serialize(message))); }

bool lsp_client::send_raw(const std::string& bytes) {
  if (to_child_ < 0) return false;
  const char* p = bytes.data();
  std::size_t left = bytes.size();
  while (left > 0) {
    ssize_t n = ::write(to_child_, p, left);
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    p += n;
    left -= static_cast<std::size_t>(n);
  }
  return true;
}

void lsp_client::close_stdin() {
  if (to_child_ >= 0) {
    ::close(to_child_);
    to_child_ = -1;
  }
}

std::optional<json::value> lsp_client::next(std::chrono::milliseconds timeout) {
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait_for(lock, timeout, [&] { return !inbox_.empty() || closed_; });
  if (inbox_.empty()) return std::nullopt;
  json::value v = std::move(inbox_.front());
  inbox_.pop_front();
  return v;
}

bool lsp_client::output_closed() const {
  std::lock_guard<std::mutex> lock(mu_);
  return closed_ && inbox_.empty();
}

std::vector<std::string> lsp_client::bad_output() const {
  std::lock_guard<std::mutex> lock(mu_);
  return bad_;
}

int lsp_client::wait_exit(std::chrono::milliseconds timeout, bool* timed_out) {
  *timed_out = false;
  if (pid_ <= 0) return -1;
  if (reaped_) return exit_code_;
  const auto until = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    int status = 0;
    pid_t r = ::waitpid(pid_, &status, WNOHANG);
    if (r == pid_) {
      reaped_ = true;
      exit_code_ = WIFEXITED(status) ? WEXITSTATUS(status) : -WTERMSIG(status);
      return exit_code_;
    }
    if (r < 0 && errno != EINTR) return -1;
    if (std::chrono::steady_clock::now() >= until) {
      *timed_out = true;
      return -1;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

void lsp_client::kill_child() {
  if (pid_ > 0 && !reaped_) ::kill(pid_, SIGKILL);
}

}  // namespace qf::cli
