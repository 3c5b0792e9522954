// An LSP client that runs a language server as a child process over pipes,
// the way an editor does: used by `quickfill demo`, bench/keystroke_replay and
// the transcript tests. It knows processes, lsp/transport's framing and JSON,
// nothing of the server it talks to.
//
// A reader thread frames the child's stdout (lsp::fd_reader) and queues each
// message with the time it arrived. Callers take messages in arrival order
// (next) or wait for the response to one of their requests (wait_response,
// which leaves everything else queued). Every wait has a timeout, which only
// guards against a hung server. Messages go out framed by
// lsp::frame_message; send_raw writes bytes as they are (to test framing
// errors). With answer_server_requests set, the reader answers each
// server->client request at once with a null result instead of queueing it,
// so the server never waits on a client that has no use for them.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include <boost/json/value.hpp>

namespace qf::lsp {

struct client_options {
  std::string stderr_path;              // the child's stderr; "" inherits ours
  bool answer_server_requests = false;  // reply null to server->client requests (not queued)
  std::size_t max_message_bytes = std::size_t(1) << 30;
};

struct received_message {
  std::chrono::steady_clock::time_point at;  // when the reader parsed it
  boost::json::value body;
};

class lsp_client {
 public:
  lsp_client() = default;
  // Closes the child's stdin, gives it 3 s to exit, then kills it.
  ~lsp_client();
  lsp_client(const lsp_client&) = delete;
  lsp_client& operator=(const lsp_client&) = delete;

  // Starts argv[0] (a path, not looked up in PATH) with argv. False with *error set.
  bool start(const std::vector<std::string>& argv, const client_options& opts, std::string* error);

  // Writes fail (false) once the child's stdin is closed or gone.
  bool send(const boost::json::value& message);
  bool send_raw(std::string_view bytes);
  // A request with the next id (1, 2, ...); returns the id.
  std::int64_t request(std::string_view method, boost::json::value params);
  bool notify(std::string_view method, boost::json::value params);
  // Answers a server->client request.
  bool respond(const boost::json::value& id, boost::json::value result);
  void close_stdin();

  // The oldest queued message; nullopt after `timeout` or once output ended.
  std::optional<received_message> next(std::chrono::milliseconds timeout);
  // The response to request `id` (taken out of the queue); nullopt after
  // `timeout` or once output ended without it.
  std::optional<received_message> wait_response(std::int64_t id, std::chrono::milliseconds timeout);
  // Whether the response to `id` has arrived and is still queued.
  bool has_response(std::int64_t id) const;
  // True once the child's output ended and every message was taken.
  bool output_closed() const;
  // Frames or bodies the reader could not parse, for diagnostics.
  std::vector<std::string> bad_output() const;

  // Waits for the child to exit: its exit code, -signal when killed by one,
  // -1 on timeout (then *timed_out is set).
  int wait_exit(std::chrono::milliseconds timeout, bool* timed_out);
  void kill_child();
  pid_t pid() const { return pid_; }

 private:
  void reader_main(std::size_t max_message_bytes, bool answer_requests);
  // Index of the queued response to `id`, or -1. Needs mu_.
  std::ptrdiff_t find_response(std::int64_t id) const;

  pid_t pid_ = -1;
  int from_child_ = -1;
  bool reaped_ = false;
  int exit_code_ = 0;
  std::int64_t next_id_ = 1;
  std::thread reader_;

  std::mutex write_mu_;  // guards to_child_ and orders whole writes
  int to_child_ = -1;

  mutable std::mutex mu_;  // guards the queue below
  std::condition_variable cv_;
  std::deque<received_message> inbox_;
  std::vector<std::string> bad_;
  bool closed_ = false;
};

}  // namespace qf::lsp
