// The daemon's single inference worker (see engine_worker.h).
#include "server/daemon/engine_worker.h"

#include <algorithm>
#include <chrono>

namespace qf::server::daemon {

engine_worker::engine_worker() : thread_([this] { worker_main(); }) {}

engine_worker::~engine_worker() { stop(); }

void engine_worker::stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopping_ && !thread_.joinable()) return;
    stopping_ = true;
    running_source_.cancel(cancel_reason::shutdown);
  }
  work_cv_.notify_all();
  done_cv_.notify_all();
  if (thread_.joinable() && thread_.get_id() != std::this_thread::get_id()) thread_.join();
}

std::uint64_t engine_worker::calls_run() const {
  std::lock_guard<std::mutex> lock(mu_);
  return served_;
}

std::size_t engine_worker::calls_waiting() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::size_t n = 0;
  for (const auto& t : queue_) n += t->started ? 0 : 1;
  return n;
}

bool engine_worker::run(std::uint64_t session, kind k, const cancel_token& cancel, const call& fn) {
  auto t = std::make_shared<ticket>();
  t->session = session;
  t->k = k;
  t->fn = &fn;
  t->cancel = cancel;
  std::unique_lock<std::mutex> lock(mu_);
  if (stopping_) return false;
  t->seq = ++seq_;
  queue_.push_back(t);
  if (k == kind::foreground && running_background_) running_source_.cancel(cancel_reason::preempted);
  work_cv_.notify_one();
  while (!t->done) {
    // Polled so that a call cancelled while it waits leaves without the
    // canceller knowing about this queue.
    done_cv_.wait_for(lock, std::chrono::milliseconds(5));
    if (!t->started && (cancel.is_cancelled() || stopping_)) {
      queue_.erase(std::remove(queue_.begin(), queue_.end(), t), queue_.end());
      return false;
    }
  }
  if (t->error) std::rethrow_exception(t->error);
  return true;
}

std::shared_ptr<engine_worker::ticket> engine_worker::pick_locked() {
  std::shared_ptr<ticket> best;
  auto served = [this](std::uint64_t s) {
    auto it = last_served_.find(s);
    return it == last_served_.end() ? std::uint64_t{0} : it->second;
  };
  for (const auto& t : queue_) {
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

void engine_worker::worker_main() {
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    work_cv_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
    if (stopping_) return;
    std::shared_ptr<ticket> t = pick_locked();
    queue_.erase(std::remove(queue_.begin(), queue_.end(), t), queue_.end());
    t->started = true;
    running_source_ = cancel_source();
    running_background_ = t->k == kind::background;
    // A foreground call queued meanwhile would have found no background call
    // to preempt; a background call never starts while one waits (pick).
    const cancel_token token = running_source_.token().linked_to(t->cancel);
    lock.unlock();
    try {
      (*t->fn)(token);
    } catch (...) {
      t->error = std::current_exception();
    }
    lock.lock();
    running_background_ = false;
    last_served_[t->session] = ++served_;
    t->done = true;
    done_cv_.notify_all();
  }
}

}  // namespace qf::server::daemon
