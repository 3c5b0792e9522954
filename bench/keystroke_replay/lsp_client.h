// A minimal LSP client for benchmarks: starts a server process with pipes on
// its stdin/stdout, frames JSON-RPC messages with Content-Length, and reads
// replies on a thread. Replies are stored by id with their arrival time;
// requests from the server (workspace/configuration, progress creation) are
// answered with null so that the server never waits on us.
#pragma once

#include <boost/json.hpp>

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace qf::bench {

using bclock = std::chrono::steady_clock;

struct reply {
  bclock::time_point at;
  boost::json::value msg;  // the whole response (result or error)
};

class lsp_client {
 public:
  // Starts `argv[0]` with `argv`; stderr goes to `stderr_path` ("" = inherit).
  lsp_client(const std::vector<std::string>& argv, const std::string& stderr_path);
  ~lsp_client();
  lsp_client(const lsp_client&) = delete;
  lsp_client& operator=(const lsp_client&) = delete;

  int64_t request(const std::string& method, boost::json::value params);  // returns the id
  void notify(const std::string& method, boost::json::value params);
  // Waits for the reply to `id`; false on timeout or when the server exited.
  bool wait(int64_t id, std::chrono::milliseconds timeout);
  std::optional<reply> get(int64_t id);  // the reply, if it arrived (kept)
  bool alive() const { return !eof_; }

 private:
  void send(const boost::json::value& msg);
  void read_loop();
  int to_child_ = -1, from_child_ = -1;
  int pid_ = -1;
  int64_t next_id_ = 1;
  std::mutex mu_;
  std::mutex write_mu_;
  std::condition_variable cv_;
  std::map<int64_t, reply> replies_;
  bool eof_ = false;
  std::thread reader_;
};

}  // namespace qf::bench
