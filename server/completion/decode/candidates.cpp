// n candidates sharing one prompt evaluation (see the header).
#include "server/completion/decode/candidates.h"

#include <algorithm>
#include <cstdint>
#include <exception>
#include <thread>

#include "server/completion/decode/eval_group.h"

namespace qf::server::completion {

namespace {

// Candidate c's sampler settings: its own seed; the first of several greedy.
infer::sampler_params sampler_for(const infer::sampler_params& sampling, int c, int n, bool sample) {
  infer::sampler_params sp = sampling;
  sp.seed = sampling.seed + static_cast<uint64_t>(c);
  if (!sample || (n > 1 && c == 0)) sp.temperature = 0;  // the sampler's greedy: argmax of the penalized logits
  return sp;
}

}  // namespace

std::vector<gen_outcome> generate_candidates(lm_sequence& seq, const lm_vocab& vocab, const fim_format& fmt,
                                             std::span<const int32_t> prompt, const stop_checker& stops,
                                             const gen_params& p, const infer::sampler_params& sampling, int n,
                                             const cancel_token& cancel, candidate_forks* forks) {
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

  // Candidate c on sequence s, from the kept first row.
  auto run = [&](int c, lm_sequence& s, const gen_params& cp, gen_outcome& out) {
    stop_checker st = stops;
    const infer::sampler_params sp = sampler_for(sampling, c, n, sample);
    infer::sampler smp(sp);
    // Plain greedy needs no sampler (and keeps speculation and on-device argmax).
    infer::sampler* use = sp.temperature <= 0 && !penalty ? nullptr : &smp;
    decode(s, vocab, fmt, prompt, first, st, cp, use, cancel, out);
  };

  if (n > 1 && forks) {
    // Together: candidates 1..n-1 in forks of the prompt, all decoded in one
    // batch per step. The engine shares the slot's cells with forks of its
    // own where it has room (nothing copied); else the kept forks take a copy.
    const int64_t room = p.max_tokens + p.draft_max + 2;
    std::vector<std::unique_ptr<lm_sequence>> shared = forks->backend().fork(seq, n_prompt, n - 1, room);
    auto fork_of = [&](int c) -> lm_sequence& {
      return shared.empty() ? forks->at(static_cast<size_t>(c - 1)) : *shared[static_cast<size_t>(c - 1)];
    };
    if (shared.empty())
      for (int c = 1; c < n; ++c) forks->at(static_cast<size_t>(c - 1)).copy_prefix(seq, n_prompt);
    outs.resize(static_cast<size_t>(n));
    for (int c = 1; c < n; ++c) outs[static_cast<size_t>(c)].prompt_done = true;
    eval_group group(forks->backend(), n);
    std::vector<std::unique_ptr<lm_sequence>> members;
    for (int c = 0; c < n; ++c) members.push_back(group.join(c == 0 ? seq : fork_of(c)));
    std::vector<std::exception_ptr> errors(static_cast<size_t>(n));
    auto body = [&](int c) {
      gen_params cp = gp;
      cp.draft = nullptr;  // prompt lookup only: a draft model's engine would run beside the batch
      if (c > 0) cp.progress = nullptr;  // only the first (the greedy one) publishes
      try {
        run(c, *members[static_cast<size_t>(c)], cp, outs[static_cast<size_t>(c)]);
      } catch (...) {
        errors[static_cast<size_t>(c)] = std::current_exception();
      }
      members[static_cast<size_t>(c)].reset();  // leaves the group: the others go on without it
    };
    std::vector<std::thread> threads;
    for (int c = 1; c < n; ++c) threads.emplace_back(body, c);
    body(0);
    for (std::thread& t : threads) t.join();
    for (const std::exception_ptr& e : errors)
      if (e) std::rethrow_exception(e);
    return outs;
  }

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
    run(c, seq, cp, outs.back());
  }
  return outs;
}

}  // namespace qf::server::completion
