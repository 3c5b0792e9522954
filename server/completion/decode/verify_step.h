// One greedy decode step with an optional speculative draft, shared by the
// completion decoder (generator.cpp) and the next-edit decoder
// (next_edit.cpp).
//
// The step evaluates [next, d1..dk] in one batch: row i holds the model's
// best token after batch[i], so the draft is accepted while d(i+1) equals
// that token, every accepted token goes to `consume` in order, and the cache
// is cut back to the accepted prefix. The result is token for token what
// k+1 single steps of greedy decoding give. A cancelled eval leaves the
// cache as before the step.
#pragma once

#include <cstdint>
#include <functional>
#include <span>

#include "inference/core/cancellation.h"
#include "server/completion/api/lm.h"

namespace qf::server::completion {

struct step_result {
  bool cancelled = false;     // the eval was stopped (the cache holds what it held before)
  bool context_full = false;  // the batch does not fit; nothing was evaluated
  bool done = false;          // consume() asked to stop
  int32_t next = -1;          // the model's token after the last accepted one
  float next_logprob = 0;
  int64_t drafted = 0, accepted = 0;
};

// `consume(token, logprob)` takes an accepted draft token and returns true
// when decoding must end. `next` itself is not passed to it (the caller
// consumed it before drafting). With a draft the logits are read as best
// tokens; `out` applies to a step without one (full rows for a sampler).
step_result verify_step(lm_sequence& seq, int32_t next, std::span<const int32_t> draft, const cancel_token& tok,
                        lm_output out, const std::function<bool(int32_t, float)>& consume);

}  // namespace qf::server::completion
