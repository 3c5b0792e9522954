// n candidates from one evaluated prompt.
//
// The prompt is evaluated once, into the request's cache slot. Its last row
// (the first token's distribution) is kept on the host. With forks,
// candidates 2..n start from the slot's prompt: forks the engine makes in the
// slot's own block pool, sharing its cells (lm_backend::fork: nothing
// copied), or, where it cannot, extra sequences kept between requests
// (candidate_forks) into which the prompt's cells are copied (copy_prefix: on
// a keystroke only the cells that changed). All n are decoded at once: each on
// its own thread, their evals meeting in one engine batch per step
// (eval_group.h), so a step reads the weights once for every candidate.
// Without forks they are decoded one after the other in the slot, each
// truncating it back to the prompt first, and each may use an equal part of
// what is left of the deadline when it starts; decoded together they share
// the whole deadline. No prompt token is evaluated twice either way. The
// slot ends up holding the prompt and the first candidate's tokens
// (together) or the last one's (one after the other).
//
// With a temperature > 0 every candidate samples with its own seed (seed + i),
// except that the first of several is the greedy one; with temperature <= 0
// all candidates would be the same, so only one is decoded. A repetition
// penalty applies to every candidate, the greedy one included (it then takes
// the argmax of the penalized logits, on the host, without speculation).
// Decoded together, the greedy one drafts by prompt lookup only (a draft
// model would run its own engine beside the batch).
#pragma once

#include <memory>
#include <span>
#include <vector>

#include "inference/sampling/sampler.h"
#include "server/completion/decode/generator.h"

namespace qf::server::completion {

// The extra sequences candidates 2..n decode in, made on first use with the
// slots' context size and kept, so that a request allocates nothing and a
// keystroke copies only the prompt cells that changed.
class candidate_forks {
 public:
  candidate_forks(lm_backend& be, int64_t n_ctx) : be_(be), n_ctx_(n_ctx) {}
  lm_backend& backend() { return be_; }
  lm_sequence& at(size_t i) {
    while (seqs_.size() <= i) seqs_.push_back(be_.new_sequence(n_ctx_));
    return *seqs_[i];
  }
  size_t kv_bytes() const {
    size_t b = 0;
    for (const auto& s : seqs_) b += s->kv_bytes();
    return b;
  }

 private:
  lm_backend& be_;
  int64_t n_ctx_;
  std::vector<std::unique_ptr<lm_sequence>> seqs_;
};

// [0] carries the prompt phase (prompt_done, evaluated, prompt_eval_ms); when
// the prompt was not finished it is the only one and has no tokens. A
// candidate cut by a cancellation ends the list.
std::vector<gen_outcome> generate_candidates(lm_sequence& seq, const lm_vocab& vocab, const fim_format& fmt,
                                             std::span<const int32_t> prompt, const stop_checker& stops,
                                             const gen_params& p, const infer::sampler_params& sampling, int n,
                                             const cancel_token& cancel, candidate_forks* forks = nullptr);

}  // namespace qf::server::completion
