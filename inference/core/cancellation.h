// Cancellation as a value, with an optional deadline.
//
// A cancel_source is held by whoever may stop a piece of work (the scheduler on
// $/cancelRequest or didChange, a higher-priority job); the work receives a
// cancel_token by value and polls it at its natural steps (between layers during
// prefill, between tokens during decode, between row blocks of a CPU matmul).
// Tokens are cheap to copy and thread-safe; the first reason set on a source
// wins.
//
// A token may carry a deadline (with_deadline): once the steady clock has
// reached it, the token reads as cancelled with reason `deadline`, at the same
// polls and with no thread watching the clock. A reason set on a source (the
// token's own, then the linked one) wins over the deadline, so a client
// cancel or an edit stays distinguishable from a budget that ran out even
// when both happened. A poll with a deadline costs one clock read (a vDSO
// clock_gettime, about 20 ns where the clock source is the TSC) next to the
// relaxed atomic loads; bench_cancel measures it, and the CPU matmul polls
// once per row block of tens of microseconds.
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <memory>

namespace qf {

enum class cancel_reason : int {
  none = 0,
  cancelled = 1,         // the client cancelled the request
  content_modified = 2,  // an edit made the work stale
  deadline = 3,          // the per-request budget ran out
  preempted = 4,         // a higher-priority job needs the worker
  shutdown = 5,
};

class cancel_token {
 public:
  using clock = std::chrono::steady_clock;

  cancel_token() = default;  // a token that is never cancelled
  bool is_cancelled() const { return source_reason() != 0 || past_deadline(); }
  // Its own source's reason, else the linked source's, else `deadline` once
  // the deadline has passed, else none.
  cancel_reason reason() const {
    const int r = source_reason_acquire();
    if (r != 0) return static_cast<cancel_reason>(r);
    return past_deadline() ? cancel_reason::deadline : cancel_reason::none;
  }
  explicit operator bool() const { return is_cancelled(); }

  // This token, also cancelled (reason `deadline`) once `d` has passed. A
  // deadline only tightens: the earlier of `d` and the one it has is kept.
  cancel_token with_deadline(clock::time_point d) const {
    cancel_token t = *this;
    t.deadline_ = std::min(deadline_, d);
    return t;
  }
  bool has_deadline() const { return deadline_ != clock::time_point::max(); }
  clock::time_point deadline() const { return deadline_; }  // max() when none

  // This token, also cancelled as soon as `parent`'s own source is (a link
  // the poller sees directly, with no thread forwarding it) and by `parent`'s
  // deadline if that is earlier. Links one level: parent's own link, if any,
  // is not followed.
  cancel_token linked_to(const cancel_token& parent) const {
    cancel_token t = *this;
    t.link_ = parent.state_;
    t.deadline_ = std::min(deadline_, parent.deadline_);
    return t;
  }

 private:
  friend class cancel_source;
  explicit cancel_token(std::shared_ptr<std::atomic<int>> s) : state_(std::move(s)) {}
  int source_reason() const {
    const int own = state_ ? state_->load(std::memory_order_relaxed) : 0;
    if (own != 0 || !link_) return own;
    return link_->load(std::memory_order_relaxed);
  }
  int source_reason_acquire() const {
    const int own = state_ ? state_->load(std::memory_order_acquire) : 0;
    if (own != 0 || !link_) return own;
    return link_->load(std::memory_order_acquire);
  }
  bool past_deadline() const { return deadline_ != clock::time_point::max() && clock::now() >= deadline_; }

  std::shared_ptr<std::atomic<int>> state_;
  std::shared_ptr<std::atomic<int>> link_;
  clock::time_point deadline_ = clock::time_point::max();
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
