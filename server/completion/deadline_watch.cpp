// Watcher thread for deadline_watch (see the header).
#include "server/completion/deadline_watch.h"

namespace qf::server::completion {

deadline_watch::deadline_watch() : thread_([this] { run(); }) {}

deadline_watch::~deadline_watch() {
  {
    std::lock_guard<std::mutex> lk(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

deadline_watch::scope::scope(deadline_watch& w, const cancel_token& parent, clock::time_point deadline)
    : w_(w), parent_(parent) {
  if (parent.is_cancelled()) src_.cancel(parent.reason());
  if (clock::now() >= deadline) src_.cancel(cancel_reason::deadline);
  {
    std::lock_guard<std::mutex> lk(w_.mu_);
    w_.armed_ = true;
    ++w_.generation_;
    w_.parent_ = parent;
    w_.target_ = &src_;
    w_.deadline_ = deadline;
  }
  w_.cv_.notify_all();
}

deadline_watch::scope::~scope() {
  std::lock_guard<std::mutex> lk(w_.mu_);
  w_.armed_ = false;
  ++w_.generation_;
  w_.target_ = nullptr;
  w_.parent_ = cancel_token();
}

void deadline_watch::run() {
  std::unique_lock<std::mutex> lk(mu_);
  while (!stop_) {
    if (!armed_) {
      cv_.wait(lk, [&] { return stop_ || armed_; });
      continue;
    }
    const uint64_t gen = generation_;
    if (parent_.is_cancelled()) target_->cancel(parent_.reason());
    auto now = clock::now();
    if (now >= deadline_) target_->cancel(cancel_reason::deadline);
    if (target_->is_cancelled()) {
      // Nothing left to do for this scope; wait for the next one (a new scope
      // may be armed before this thread runs again, hence the generation).
      cv_.wait(lk, [&] { return stop_ || generation_ != gen; });
      continue;
    }
    auto wake = std::min(deadline_, now + std::chrono::microseconds(250));
    cv_.wait_until(lk, wake);
  }
}

}  // namespace qf::server::completion
