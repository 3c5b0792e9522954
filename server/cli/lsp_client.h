// A small LSP client that runs a server as a child process over pipes, the
// way an editor does: used by `quickfill demo` and by the transcript test
// runner. A reader thread frames the child's stdout into a queue of JSON
// messages; the caller sends framed messages (or raw bytes, to test framing
// errors) and waits for messages with a timeout that only guards against a
// hung server.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <boost/json/value.hpp>

namespace qf::cli {

class lsp_client {
 public:
  lsp_client() = default;
  ~lsp_client();
  lsp_client(const lsp_client&) = delete;
  lsp_client& operator=(const lsp_client&) = delete;

  // argv[0] is the executable path. stderr_path: "" inherits stderr.
  bool start(const std::vector<std::string>& argv, const std::string& stderr_path, std::string* error);
  bool send(const boost::json::value& message);
  bool send_raw(const std::string& bytes);
  void close_stdin();
  // The next message from the server, or nullopt after `timeout` or at end of output.
  std::optional<boost::json::value> next(std::chrono::milliseconds timeout);
  bool output_closed() const;
  // Waits for the child to exit; returns its exit code, or -1 on timeout
  // (then *timed_out is set) or when killed by a signal (-signal).
  int wait_exit(std::chrono::milliseconds timeout, bool* timed_out);
  void kill_child();
  pid_t pid() const { return pid_; }
  // Messages the reader could not parse (framing/JSON), for diagnostics.
  std::vector<std::string> bad_output() const;

 private:
  void reader_main();

  pid_t pid_ = -1;
  int to_child_ = -1;
  int from_child_ = -1;
  bool reaped_ = false;
  int exit_code_ = 0;
  std::thread reader_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<boost::json::value> inbox_;
  std::vector<std::string> bad_;
  bool closed_ = false;
};

}  // namespace qf::cli
