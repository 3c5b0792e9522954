// The daemon's turn on a shared engine (see engine_worker.h).
#include "server/daemon/engine_worker.h"

#include <algorithm>
#include <chrono>

namespace qf::server::daemon {

engine_worker::~engine_worker() { stop(); }

void engine_worker::stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
    running_source_.cancel(cancel_reason::shutdown);
  }
  turn_cv_.notify_all();
}

std::uint64_t engine_worker::calls_run() const {
  std::lock_guard<std::mutex> lock(mu_);
  return served_;
}

std::size_t engine_worker::calls_waiting() const {
  std::lock_guard<std::mutex> lock(mu_);
  return queue_.size();
}

const engine_worker::ticket* engine_worker::pick_locked() const {
  const ticket* best = nullptr;
  auto served = [this](std::uint64_t s) {
    auto it = last_served_.find(s);
    return it == last_served_.end() ? std::uint64_t{0} : it->second;
  };
  for (const ticket* t : queue_) {
    if (!best) {
      best = t;
      continue;
    }
    if (t->k != best->k) {
      if (t->k == kind::foreground) best = t;
      continue;
    }
    const auto a = served(t->session), b = served(best->session);
    if (a < b || (a == b && t->seq < best->seq)) best = t;
  }
  return best;
}

bool engine_worker::run(std::uint64_t session, kind k, const cancel_token& cancel, const call& fn) {
  ticket t;
  t.session = session;
  t.k = k;
  cancel_token token;
  {
    std::unique_lock<std::mutex> lock(mu_);
    if (stopping_) return false;
    t.seq = ++seq_;
    queue_.push_back(&t);
    tell(event::queued, session, k);
    if (k == kind::foreground && running_background_ && !running_source_.token().is_cancelled()) {
      tell(event::preempted, running_session_, kind::background);
      running_source_.cancel(cancel_reason::preempted);
    }
    while (running_ || pick_locked() != &t) {
      // Polled so that a call cancelled while it waits leaves without the
      // canceller knowing about this queue.
      turn_cv_.wait_for(lock, std::chrono::milliseconds(5));
      if (cancel.is_cancelled() || stopping_) {
        queue_.erase(std::find(queue_.begin(), queue_.end(), &t));
        tell(event::left, session, k);
        lock.unlock();
        turn_cv_.notify_all();  // it may have been the next one
        return false;
      }
    }
    queue_.erase(std::find(queue_.begin(), queue_.end(), &t));
    running_ = true;
    running_source_ = cancel_source();
    running_background_ = k == kind::background;
    running_session_ = session;
    tell(event::started, session, k);
    // A foreground call queued meanwhile would have found no background call
    // to preempt; a background call never starts while one waits (pick).
    token = running_source_.token().linked_to(cancel);
  }
  struct turn_end {
    engine_worker* w;
    std::uint64_t session;
    ~turn_end() { w->finish(session); }
  } end{this, session};
  fn(token);
  return true;
}

void engine_worker::finish(std::uint64_t session) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    running_ = false;
    running_background_ = false;
    last_served_[session] = ++served_;
  }
  turn_cv_.notify_all();
}

}  // namespace qf::server::daemon
