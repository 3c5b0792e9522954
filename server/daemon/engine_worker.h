// The daemon's single inference worker: one thread that makes every call into
// a shared completion provider, for all sessions, one at a time, in a fair
// order. Each session keeps its own scheduler (queue, latest-wins,
// cancellation, server/core/scheduler.h); its worker thread blocks in run() while
// its call waits here and runs.
//
// Policy:
// * A call is foreground (a request: complete, next edit, explain; and the
//   short bookkeeping calls) or background (background_step).
// * Foreground calls go first. Among them the session served least recently
//   goes first (ties: arrival order). A session has at most one call waiting
//   (its scheduler thread is blocked in it), so a client that floods requests
//   gets one turn while every other waiting client gets one too.
// * A background call runs only when no foreground call waits; a foreground
//   call that arrives while a background call runs cancels it (preempted), so
//   one client's background work never delays another client's keystroke.
// * A waiting call whose own token is cancelled (an edit, a newer request)
//   leaves the queue at once without running.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <exception>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <thread>

#include "inference/core/cancellation.h"

namespace qf::server::daemon {

class engine_worker {
 public:
  enum class kind { foreground, background };
  using call = std::function<void(const cancel_token& cancel)>;

  engine_worker();
  ~engine_worker();
  engine_worker(const engine_worker&) = delete;
  engine_worker& operator=(const engine_worker&) = delete;

  // Runs `fn` on the worker thread and returns when it has returned (an
  // exception it throws is rethrown here). `fn` gets `cancel` linked to the
  // worker's own preemption. False, without running fn, when `cancel` fired
  // while the call waited or the worker stopped.
  bool run(std::uint64_t session, kind k, const cancel_token& cancel, const call& fn);
  // Ends the thread; waiting calls return false.
  void stop();

  std::uint64_t calls_run() const;
  // Calls waiting for their turn (not the one running).
  std::size_t calls_waiting() const;

 private:
  struct ticket {
    std::uint64_t session = 0;
    kind k = kind::foreground;
    std::uint64_t seq = 0;
    const call* fn = nullptr;
    cancel_token cancel;
    bool started = false, done = false;
    std::exception_ptr error;
  };
  void worker_main();
  std::shared_ptr<ticket> pick_locked();

  mutable std::mutex mu_;
  std::condition_variable work_cv_, done_cv_;
  std::deque<std::shared_ptr<ticket>> queue_;
  std::map<std::uint64_t, std::uint64_t> last_served_;  // session -> serve counter when last served
  std::uint64_t seq_ = 0, served_ = 0;
  bool running_background_ = false;
  cancel_source running_source_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace qf::server::daemon
