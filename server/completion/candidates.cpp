// n candidates sharing one prompt evaluation (see the header).
#include "server/completion/candidates.h"

#include <algorithm>
#include <cstdint>

namespace qf::server::completion {

std::vector<gen_outcome> generate_candidates(lm_sequence& seq, const lm_vocab& vocab, const fim_format& fmt,
                                             std::span<const int32_t> prompt, const stop_checker& stops,
                                             const gen_params& p, const infer::sampler_params& sampling, int n,
                                             const cancel_token& cancel) {
  const bool sample = sampling.temperature > 0;
  const bool penalty = sampling.repeat_penalty != 1.0f && sampling.repeat_last_n != 0;
  n = sample ? std::max(1, n) : 1;
  gen_params gp = p;
  gp.full_first_row = sample || penalty;  // a sampler reads whole rows
  std::vector<gen_outcome> outs(1);
  if (prompt.empty() || !eval_prompt(seq, prompt, gp, cancel, outs[0])) return outs;
  outs[0].prompt_done = true;
  const first_row first = take_first_row(seq);
  const int64_t n_prompt = static_cast<int64_t>(prompt.size());
  const bool has_deadline = p.deadline != gen_clock::time_point::max();

  for (int c = 0; c < n; ++c) {
    if (c > 0) {
      const gen_outcome& prev = outs.back();
      if (prev.cancelled != cancel_reason::none || cancel.is_cancelled()) break;
      if (has_deadline && gen_clock::now() >= p.deadline) break;
      seq.keep_first(n_prompt);  // back to the prompt: the next candidate continues its KV
      outs.emplace_back();
      outs.back().prompt_done = true;
    }
    gen_params cp = gp;
    if (c > 0) cp.progress = nullptr;  // only the first publishes (of several, the greedy one)
    if (has_deadline) {
      const auto now = gen_clock::now();
      cp.deadline = now + (p.deadline - now) / (n - c);
    }
    stop_checker st = stops;
    const bool greedy = !sample || (n > 1 && c == 0);
    infer::sampler_params sp = sampling;
    sp.seed = sampling.seed + static_cast<uint64_t>(c);
    if (greedy) sp.temperature = 0;  // the sampler's greedy: argmax of the penalized logits
    infer::sampler smp(sp);
    // Plain greedy needs no sampler (and keeps speculation and on-device argmax).
    infer::sampler* use = greedy && !penalty ? nullptr : &smp;
    decode(seq, vocab, fmt, prompt, first, st, cp, use, cancel, outs.back());
  }
  return outs;
}

}  // namespace qf::server::completion
