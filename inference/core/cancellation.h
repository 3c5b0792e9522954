// Cancellation as a value.
//
// A cancel_source is held by whoever may stop a piece of work (the scheduler on
// $/cancelRequest or didChange, a deadline watcher, a higher-priority job); the
// work receives a cancel_token by value and polls it at its natural steps
// (between layers during prefill, between tokens during decode). Tokens are
// cheap to copy and thread-safe; the first reason set wins.
#pragma once

#include <atomic>
#include <memory>

namespace qf {

enum class cancel_reason : int {
  none = 0,
  cancelled = 1,         // the client cancelled ($/cancelRequest) -> -32800
  content_modified = 2,  // an edit made the work stale -> -32801
  deadline = 3,          // the per-request budget ran out
  preempted = 4,         // a higher-priority job needs the worker
  shutdown = 5,
};

class cancel_token {
 public:
  cancel_token() = default;  // a token that is never cancelled
  bool is_cancelled() const {
    return (state_ && state_->load(std::memory_order_relaxed) != 0) ||
           (link_ && link_->load(std::memory_order_relaxed) != 0);
  }
  // Its own reason, else the linked token's.
  cancel_reason reason() const {
    const int own = state_ ? state_->load(std::memory_order_acquire) : 0;
    if (own != 0 || !link_) return static_cast<cancel_reason>(own);
    return static_cast<cancel_reason>(link_->load(std::memory_order_acquire));
  }
  explicit operator bool() const { return is_cancelled(); }
  // This token, also cancelled as soon as `parent`'s own source is (a link
  // the poller sees directly, with no thread forwarding it). Links one level:
  // parent's own link, if any, is not followed.
  cancel_token linked_to(const cancel_token& parent) const {
    cancel_token t = *this;
    t.link_ = parent.state_;
    return t;
  }

 private:
  friend class cancel_source;
  explicit cancel_token(std::shared_ptr<std::atomic<int>> s) : state_(std::move(s)) {}
  std::shared_ptr<std::atomic<int>> state_;
  std::shared_ptr<std::atomic<int>> link_;
};

class cancel_source {
 public:
  cancel_source() : state_(std::make_shared<std::atomic<int>>(0)) {}
  // Sets the reason if none is set yet; returns true if this call cancelled.
  bool cancel(cancel_reason why) {
    int expected = 0;
    return state_->compare_exchange_strong(expected, static_cast<int>(why), std::memory_order_acq_rel);
  }
  cancel_token token() const { return cancel_token(state_); }
  bool is_cancelled() const { return state_->load(std::memory_order_relaxed) != 0; }
  cancel_reason reason() const { return static_cast<cancel_reason>(state_->load(std::memory_order_acquire)); }

 private:
  std::shared_ptr<std::atomic<int>> state_;
};

}  // namespace qf
