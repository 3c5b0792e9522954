// n candidates from one evaluated prompt.
//
// The prompt is evaluated once, into the request's cache slot. Its last row
// (the first token's distribution) is kept on the host; then the candidates
// are decoded one after the other in that same slot, each starting from the
// kept row and truncating the slot back to the prompt (keep_first) before it
// starts: every candidate continues the one prompt KV, no prompt token is
// evaluated twice and no cache is copied. The slot ends up holding the prompt
// and the last candidate's tokens.
//
// With a temperature > 0 every candidate samples with its own seed (seed + i),
// except that the first of several is the greedy one; with temperature <= 0
// all candidates would be the same, so only one is decoded. A repetition
// penalty applies to every candidate, the greedy one included (it then takes
// the argmax of the penalized logits, on the host, without speculation). The deadline is
// shared: candidate i may use an equal part of what is left when it starts.
#pragma once

#include <span>
#include <vector>

#include "inference/sampling/sampler.h"
#include "server/completion/generator.h"

namespace qf::server::completion {

// [0] carries the prompt phase (prompt_done, evaluated, prompt_eval_ms); when
// the prompt was not finished it is the only one and has no tokens. A
// candidate cut by a cancellation ends the list.
std::vector<gen_outcome> generate_candidates(lm_sequence& seq, const lm_vocab& vocab, const fim_format& fmt,
                                             std::span<const int32_t> prompt, const stop_checker& stops,
                                             const gen_params& p, const infer::sampler_params& sampling, int n,
                                             const cancel_token& cancel);

}  // namespace qf::server::completion
