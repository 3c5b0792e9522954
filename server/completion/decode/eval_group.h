// Sequences decoded on their own threads whose evals meet in one engine batch.
//
// Each member of a group wraps one sequence; a member's eval() waits until
// every other member still in the group has also called eval() (or left),
// and the thread that completes the set runs all of them as one
// lm_backend::eval_batch, so one engine pass reads the weights once for every
// member's rows. Everything else a decoder does between evals (sampling, stop
// rules, drafting) runs on its own thread, in parallel. This lets the
// one-sequence decode loop (generator.h) decode n candidates in lockstep
// without being rewritten as a state machine.
//
// A member leaves when it is destroyed (its decoding is over); a member that
// stops calling eval() without leaving would hold the others. Only eval() is
// combined: a member's other calls go straight to its sequence, and must
// only touch that sequence's host state (keep_first, tokens, outputs), never
// the engine (move_range is refused while a group may be running a batch).
// One output kind per pass: when members ask for different kinds, the pass
// returns whole logits rows to all (best_token still works from them).
#pragma once

#include <condition_variable>
#include <cstdint>
#include <exception>
#include <memory>
#include <mutex>
#include <vector>

#include "server/completion/api/lm.h"

namespace qf::server::completion {

class eval_group {
 public:
  // A group of n members on `be`; make each member with join() before any evaluates.
  eval_group(lm_backend& be, int n) : be_(be), members_(n) {}
  eval_group(const eval_group&) = delete;
  eval_group& operator=(const eval_group&) = delete;

  // Member i: evals of `seq` go through the group. The member must be
  // destroyed (leave) when its decoding ends, on any path.
  std::unique_ptr<lm_sequence> join(lm_sequence& seq);

  int64_t batches() const;  // engine batches run so far (tests, stats)

 private:
  class member;
  struct request {
    lm_batch_entry entry;
    lm_output out = lm_output::best;
    bool done = false;
    std::exception_ptr error;
  };
  lm_eval_result submit(request& r);
  void leave();
  // Runs the waiting requests as one batch; called with the lock held by
  // the thread that completed the set, which releases it while the engine runs.
  void run_locked(std::unique_lock<std::mutex>& lock);

  lm_backend& be_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  int members_;
  std::vector<request*> waiting_;
  int64_t batches_ = 0;
};

}  // namespace qf::server::completion
