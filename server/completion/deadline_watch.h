// Linked cancellation with a deadline.
//
// The engine polls a single cancel_token between layers and tokens. A request
// must stop when the client or an edit cancels it OR when its budget runs out,
// so the pipeline hands the engine a token of its own that one watcher thread
// cancels when the deadline passes (reason `deadline`) or when the parent
// token is cancelled (same reason). The token is also linked to the parent
// directly (cancel_token::linked_to), so a cancel or an edit reaches the
// engine at once even when every core is busy and the watcher cannot run.
// The watcher wakes every 250 us while a watch is armed and sleeps on a
// condition variable otherwise.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>

#include "inference/core/cancellation.h"

namespace qf::server::completion {

class deadline_watch {
 public:
  using clock = std::chrono::steady_clock;
  deadline_watch();
  ~deadline_watch();
  deadline_watch(const deadline_watch&) = delete;
  deadline_watch& operator=(const deadline_watch&) = delete;

  // While a scope lives, token() is cancelled with the parent's reason or at the deadline.
  class scope {
   public:
    scope(deadline_watch& w, const cancel_token& parent, clock::time_point deadline);
    ~scope();
    scope(const scope&) = delete;
    scope& operator=(const scope&) = delete;
    cancel_token token() const { return src_.token().linked_to(parent_); }
    bool deadline_hit() const { return src_.reason() == cancel_reason::deadline; }

   private:
    deadline_watch& w_;
    cancel_source src_;
    cancel_token parent_;
  };

 private:
  void run();
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  bool armed_ = false;
  uint64_t generation_ = 0;  // bumped by every arm and disarm
  cancel_token parent_;
  cancel_source* target_ = nullptr;
  clock::time_point deadline_{};
  std::thread thread_;
};

}  // namespace qf::server::completion
