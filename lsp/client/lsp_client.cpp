// Child-process LSP client (see lsp_client.h).
#include "lsp/client/lsp_client.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include <boost/json.hpp>

#include "lsp/transport.h"

namespace qf::lsp {

namespace json = boost::json;
using std::chrono::milliseconds;

namespace {

bool is_response_to(const json::value& v, std::int64_t id) {
  const json::object* o = v.if_object();
  if (!o || o->contains("method")) return false;
  const json::value* idv = o->if_contains("id");
  return idv && idv->is_int64() && idv->as_int64() == id;
}

}  // namespace

lsp_client::~lsp_client() {
  close_stdin();
  if (pid_ > 0 && !reaped_) {
    bool timed_out = false;
    wait_exit(milliseconds(3000), &timed_out);
    if (timed_out) {
      kill_child();
      wait_exit(milliseconds(3000), &timed_out);
    }
  }
  if (reader_.joinable()) reader_.join();
  if (from_child_ >= 0) ::close(from_child_);
}

bool lsp_client::start(const std::vector<std::string>& argv, const client_options& opts, std::string* error) {
  if (argv.empty() || pid_ > 0) {
    *error = argv.empty() ? "no program to start" : "already started";
    return false;
  }
  int in_pipe[2], out_pipe[2];
  if (::pipe2(in_pipe, O_CLOEXEC) != 0) {
    *error = std::string("pipe: ") + std::strerror(errno);
    return false;
  }
  if (::pipe2(out_pipe, O_CLOEXEC) != 0) {
    *error = std::string("pipe: ") + std::strerror(errno);
    ::close(in_pipe[0]);
    ::close(in_pipe[1]);
    return false;
  }
  auto close_pipes = [&] {
    for (int fd : {in_pipe[0], in_pipe[1], out_pipe[0], out_pipe[1]}) ::close(fd);
  };
  int err_fd = -1;
  if (!opts.stderr_path.empty()) {
    err_fd = ::open(opts.stderr_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (err_fd < 0) {
      *error = "cannot open " + opts.stderr_path + ": " + std::strerror(errno);
      close_pipes();
      return false;
    }
  }
  std::vector<char*> cargv;
  for (const auto& a : argv) cargv.push_back(const_cast<char*>(a.c_str()));
  cargv.push_back(nullptr);
  const pid_t pid = ::fork();
  if (pid < 0) {
    *error = std::string("fork: ") + std::strerror(errno);
    close_pipes();
    if (err_fd >= 0) ::close(err_fd);
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
  reader_ = std::thread([this, max = opts.max_message_bytes, answer = opts.answer_server_requests] {
    reader_main(max, answer);
  });
  return true;
}

void lsp_client::reader_main(std::size_t max_message_bytes, bool answer_requests) {
  fd_reader reader(from_child_, max_message_bytes);
  for (;;) {
    read_result r = reader.read_message();
    const auto at = std::chrono::steady_clock::now();
    if (r.what == read_result::kind::message) {
      boost::system::error_code ec;
      json::value v = json::parse(r.body, ec);
      const json::object* o = ec ? nullptr : v.if_object();
      if (answer_requests && o && o->contains("method") && o->contains("id")) {
        respond(o->at("id"), nullptr);
        continue;
      }
      std::lock_guard<std::mutex> lock(mu_);
      if (ec)
        bad_.push_back("unparsable message: " + r.body.substr(0, 200));
      else
        inbox_.push_back(received_message{at, std::move(v)});
    } else if (r.what == read_result::kind::bad_header || r.what == read_result::kind::too_large) {
      std::lock_guard<std::mutex> lock(mu_);
      bad_.push_back(r.error);
    } else {
      std::lock_guard<std::mutex> lock(mu_);
      if (!r.error.empty()) bad_.push_back(r.error);
      closed_ = true;
      cv_.notify_all();
      return;
    }
    cv_.notify_all();
  }
}

bool lsp_client::send(const json::value& message) { return send_raw(frame_message(json::serialize(message))); }

bool lsp_client::send_raw(std::string_view bytes) {
  std::lock_guard<std::mutex> lock(write_mu_);
  if (to_child_ < 0) return false;
  while (!bytes.empty()) {
    const ssize_t n = ::write(to_child_, bytes.data(), bytes.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    bytes.remove_prefix(static_cast<std::size_t>(n));
  }
  return true;
}

std::int64_t lsp_client::request(std::string_view method, json::value params) {
  const std::int64_t id = next_id_++;
  send(json::object{{"jsonrpc", "2.0"}, {"id", id}, {"method", method}, {"params", std::move(params)}});
  return id;
}

bool lsp_client::notify(std::string_view method, json::value params) {
  return send(json::object{{"jsonrpc", "2.0"}, {"method", method}, {"params", std::move(params)}});
}

bool lsp_client::respond(const json::value& id, json::value result) {
  return send(json::object{{"jsonrpc", "2.0"}, {"id", id}, {"result", std::move(result)}});
}

void lsp_client::close_stdin() {
  std::lock_guard<std::mutex> lock(write_mu_);
  if (to_child_ >= 0) {
    ::close(to_child_);
    to_child_ = -1;
  }
}

std::optional<received_message> lsp_client::next(milliseconds timeout) {
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait_for(lock, timeout, [&] { return !inbox_.empty() || closed_; });
  if (inbox_.empty()) return std::nullopt;
  received_message m = std::move(inbox_.front());
  inbox_.pop_front();
  return m;
}

std::ptrdiff_t lsp_client::find_response(std::int64_t id) const {
  for (std::size_t i = 0; i < inbox_.size(); ++i)
    if (is_response_to(inbox_[i].body, id)) return static_cast<std::ptrdiff_t>(i);
  return -1;
}

std::optional<received_message> lsp_client::wait_response(std::int64_t id, milliseconds timeout) {
  std::unique_lock<std::mutex> lock(mu_);
  std::ptrdiff_t i = -1;
  cv_.wait_for(lock, timeout, [&] { return (i = find_response(id)) >= 0 || closed_; });
  if (i < 0) i = find_response(id);
  if (i < 0) return std::nullopt;
  received_message m = std::move(inbox_[static_cast<std::size_t>(i)]);
  inbox_.erase(inbox_.begin() + i);
  return m;
}

bool lsp_client::has_response(std::int64_t id) const {
  std::lock_guard<std::mutex> lock(mu_);
  return find_response(id) >= 0;
}

bool lsp_client::output_closed() const {
  std::lock_guard<std::mutex> lock(mu_);
  return closed_ && inbox_.empty();
}

std::vector<std::string> lsp_client::bad_output() const {
  std::lock_guard<std::mutex> lock(mu_);
  return bad_;
}

int lsp_client::wait_exit(milliseconds timeout, bool* timed_out) {
  *timed_out = false;
  if (pid_ <= 0) return -1;
  if (reaped_) return exit_code_;
  const auto until = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    int status = 0;
    const pid_t r = ::waitpid(pid_, &status, WNOHANG);
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
    std::this_thread::sleep_for(milliseconds(5));
  }
}

void lsp_client::kill_child() {
  if (pid_ > 0 && !reaped_) ::kill(pid_, SIGKILL);
}

}  // namespace qf::lsp
