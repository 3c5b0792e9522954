// One decode step with draft verification (see the header).
#include "server/completion/decode/verify_step.h"

#include <vector>

namespace qf::server::completion {

step_result verify_step(lm_sequence& seq, int32_t next, std::span<const int32_t> draft, const cancel_token& tok,
                        lm_output out, const std::function<bool(int32_t, float)>& consume) {
  step_result r;
  std::vector<int32_t> batch{next};
  batch.insert(batch.end(), draft.begin(), draft.end());
  const int64_t base = static_cast<int64_t>(seq.tokens().size());
  if (base + static_cast<int64_t>(batch.size()) > seq.n_ctx()) {
    r.context_full = true;
    return r;
  }
  const lm_eval_result e = seq.eval(batch, batch.size() > 1 ? lm_logits::all : lm_logits::last, tok,
                                    batch.size() > 1 ? lm_output::best : out);
  if (e.cancelled) {
    r.cancelled = true;
    if (static_cast<int64_t>(seq.tokens().size()) > base) seq.keep_first(base);
    return r;
  }
  r.next = seq.best_token(0);
  r.next_logprob = seq.best_logprob(0);
  r.drafted = static_cast<int64_t>(draft.size());
  while (r.accepted < r.drafted && r.next == draft[r.accepted]) {
    ++r.accepted;
    if (consume(r.next, r.next_logprob)) {
      r.done = true;
      break;
    }
    r.next = seq.best_token(r.accepted);
    r.next_logprob = seq.best_logprob(r.accepted);
  }
  if (r.drafted > 0) seq.keep_first(base + 1 + r.accepted);  // drop the rejected tail
  return r;
}

}  // namespace qf::server::completion
