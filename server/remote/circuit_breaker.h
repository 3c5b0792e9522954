// A circuit breaker for one endpoint of a remote completion source.
//
// closed: requests go through; `failure_threshold` failures in a row open it.
// open: requests are refused without touching the network for `cool_down`,
//   so a dead endpoint costs nothing per keystroke and the source fails over
//   (or fails with failure_kind::circuit_open) at once.
// half_open: after the cool-down one request (the probe) is let through; its
//   success closes the breaker, its failure opens it again for another
//   cool-down. While the probe is out, other requests are refused.
// Time is passed in (steady clock), so tests drive it without sleeping. Not
// thread-safe: a source lives on the single inference worker.
#pragma once

#include <chrono>
#include <string>

namespace qf::remote {

class circuit_breaker {
 public:
  using clock = std::chrono::steady_clock;
  enum class state { closed, open, half_open };

  struct options {
    int failure_threshold = 3;
    std::chrono::milliseconds cool_down{5000};
  };
  circuit_breaker() : circuit_breaker(options{}) {}
  explicit circuit_breaker(options o) : o_(o) {}

  // May a request go out now? In the open state after the cool-down this
  // moves to half_open and returns true once (the probe).
  bool allow(clock::time_point now);
  void record_success();
  void record_failure(clock::time_point now);
  // A request that was let through ended without a verdict (cancelled, or
  // cut by its deadline while the endpoint was answering): a probe may go again.
  void record_abandoned() { probe_out_ = false; }

  state current(clock::time_point now) const;  // open reads as half_open once the cool-down is over
  int consecutive_failures() const { return failures_; }
  // When an open breaker lets the next probe through.
  clock::time_point retry_at() const { return opened_at_ + o_.cool_down; }

 private:
  options o_;
  state state_ = state::closed;
  int failures_ = 0;
  bool probe_out_ = false;
  clock::time_point opened_at_{};
};

const char* breaker_state_name(circuit_breaker::state s);

}  // namespace qf::remote
