// The daemon's turn on a shared engine: every call into a shared completion
// provider, from every session, runs one at a time, in a fair order. A call
// runs on the thread that makes it (the session's scheduler worker, see
// server/core/scheduler.h; the HTTP endpoint has one too): run() waits for the
// call's turn, runs it there and hands the turn to the next one. The engine
// has no thread of its own, so a call costs no handoff beyond the session's
// own; each session keeps its own scheduler (queue, latest-wins, cancellation)
// and this class only orders the sessions' calls (docs/daemon.md, "Threads
// and ownership").
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
//
// Observation: an optional observer (set_observer) is told, in the worker's
// own order, when a call joins the queue, starts its turn, leaves without
// running, and when a running background call is preempted; traces and the
// daemon's load tests (tests/server/daemon/test_daemon_load.cpp) read the
// order of turns from it. It only watches: the policy does not depend on it.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <mutex>

#include "inference/core/cancellation.h"

namespace qf::server::daemon {

class engine_worker {
 public:
  enum class kind { foreground, background };
  using call = std::function<void(const cancel_token& cancel)>;
  enum class event { queued, started, left, preempted };
  // Called under the worker's lock, in the order things happen: it must be
  // quick and must not call into the worker. `preempted` names the session
  // and kind of the background call being cancelled.
  using observer = std::function<void(event e, std::uint64_t session, kind k)>;

  engine_worker() = default;
  ~engine_worker();
  engine_worker(const engine_worker&) = delete;
  engine_worker& operator=(const engine_worker&) = delete;

  // Waits for the call's turn, runs `fn` on this thread and returns when it
  // has returned (an exception it throws propagates; the turn passes on
  // either way). `fn` gets `cancel` linked to the engine's own preemption.
  // False, without running fn, when `cancel` fired while the call waited or
  // the engine stopped.
  bool run(std::uint64_t session, kind k, const cancel_token& cancel, const call& fn);
  // Refuses new calls; waiting calls return false, a running one is
  // cancelled (reason shutdown) and ends on its own thread.
  void stop();

  // Set before the first call (not synchronised with running calls).
  void set_observer(observer o) { observer_ = std::move(o); }

  std::uint64_t calls_run() const;
  // Calls waiting for their turn (not the one running).
  std::size_t calls_waiting() const;

 private:
  struct ticket {
    std::uint64_t session = 0;
    kind k = kind::foreground;
    std::uint64_t seq = 0;
  };
  // The waiting call whose turn is next (the policy above); queue_ not empty.
  const ticket* pick_locked() const;
  void finish(std::uint64_t session);
  void tell(event e, std::uint64_t session, kind k) const {
    if (observer_) observer_(e, session, k);
  }

  mutable std::mutex mu_;
  std::condition_variable turn_cv_;
  std::deque<const ticket*> queue_;                     // waiting calls (each on its caller's stack)
  std::map<std::uint64_t, std::uint64_t> last_served_;  // session -> serve counter when last served
  std::uint64_t seq_ = 0, served_ = 0;
  bool running_ = false, running_background_ = false;
  std::uint64_t running_session_ = 0;
  cancel_source running_source_;
  bool stopping_ = false;
  observer observer_;
};

}  // namespace qf::server::daemon
