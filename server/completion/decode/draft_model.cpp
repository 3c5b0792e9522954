// Draft-model speculation (see the header).
#include "server/completion/decode/draft_model.h"

#include <algorithm>
#include <cmath>

namespace qf::server::completion {

std::string draft_vocab_mismatch(const lm_vocab& target, const lm_vocab& draft) {
  if (target.n_vocab() != draft.n_vocab())
    return "another tokenizer: the draft model's vocabulary has " + std::to_string(draft.n_vocab()) + " tokens, the model's " +
           std::to_string(target.n_vocab());
  for (int32_t id = 0; id < target.n_vocab(); ++id)
    if (target.piece(id) != draft.piece(id) || target.is_control(id) != draft.is_control(id))
      return "the draft model's token " + std::to_string(id) + " differs from the model's (another tokenizer)";
  const lm_specials& a = target.specials();
  const lm_specials& b = draft.specials();
  if (a.bos != b.bos || a.eos != b.eos || a.eot != b.eot || a.fim_pre != b.fim_pre || a.fim_suf != b.fim_suf ||
      a.fim_mid != b.fim_mid)
    return "another tokenizer: the draft model's special tokens differ from the model's";
  return "";
}

model_drafter::model_drafter(std::unique_ptr<lm_backend> backend, int64_t n_ctx, int ngram, double min_prob)
    : backend_(std::move(backend)), lookup_(ngram), min_prob_(min_prob) {
  resize(n_ctx);
}

void model_drafter::resize(int64_t n_ctx) {
  seq_.reset();  // free the old cache first
  const int64_t train = backend_->n_ctx_train();
  seq_ = backend_->new_sequence(train > 0 ? std::min(n_ctx, train) : n_ctx);
}

int64_t model_drafter::common_prefix(std::span<const int32_t> history) const {
  const std::vector<int32_t>& have = seq_->tokens();
  const int64_t n = std::min<int64_t>(static_cast<int64_t>(have.size()), static_cast<int64_t>(history.size()) - 1);
  int64_t common = 0;
  while (common < n && have[common] == history[common]) ++common;
  return common;
}

int64_t model_drafter::keep_common(std::span<const int32_t> history) {
  const int64_t common = common_prefix(history);
  if (static_cast<int64_t>(seq_->tokens().size()) > common) seq_->keep_first(common);
  return common;
}

bool model_drafter::behind(std::span<const int32_t> history) const {
  return !history.empty() && static_cast<int64_t>(history.size()) - common_prefix(history) > k_inline_catch_up;
}

bool model_drafter::warm(std::span<const int32_t> history, int64_t chunk, const cancel_token& cancel) {
  if (history.size() < 2 || static_cast<int64_t>(history.size()) > seq_->n_ctx()) return true;
  // Everything but the last token: a proposal evaluates that one for its row.
  const std::span<const int32_t> body = history.first(history.size() - 1);
  int64_t have = keep_common(history);
  while (have < static_cast<int64_t>(body.size())) {
    if (cancel.is_cancelled()) return false;
    const int64_t n = std::min<int64_t>(std::max<int64_t>(chunk, 1), static_cast<int64_t>(body.size()) - have);
    lm_eval_result r = seq_->eval(body.subspan(have, n), lm_logits::none, cancel, lm_output::best);
    stats_.caught_up += r.n_evaluated;
    have = static_cast<int64_t>(seq_->tokens().size());
    if (r.cancelled) return false;
  }
  return true;
}

std::vector<int32_t> model_drafter::propose(std::span<const int32_t> history, int max_draft,
                                            const cancel_token& cancel) {
  ++stats_.proposals;
  std::vector<int32_t> draft;
  if (max_draft <= 0 || history.empty()) return draft;
  if (skip_ > 0) {
    --skip_;
    ++stats_.skipped;
    return lookup_.propose(history, max_draft, cancel);
  }
  if (static_cast<int64_t>(history.size()) + max_draft > seq_->n_ctx() || behind(history)) {
    ++stats_.cold;
    return lookup_.propose(history, max_draft, cancel);
  }
  const int64_t common = keep_common(history);
  lm_eval_result r = seq_->eval(history.subspan(common), lm_logits::last, cancel, lm_output::best);
  stats_.caught_up += r.n_evaluated;
  if (r.cancelled) return draft;
  const float min_logprob = min_prob_ > 0 ? static_cast<float>(std::log(min_prob_)) : -INFINITY;
  while (static_cast<int>(draft.size()) < max_draft) {
    const int32_t t = seq_->best_token(0);
    const float lp = seq_->best_logprob(0);
    if (t < 0 || !(lp >= min_logprob)) break;
    draft.push_back(t);
    if (static_cast<int>(draft.size()) == max_draft || cancel.is_cancelled()) break;
    const int32_t one[1] = {t};
    if (seq_->eval(one, lm_logits::last, cancel, lm_output::best).cancelled) break;
  }
  if (draft.empty()) {
    if (!cancel.is_cancelled()) {
      skip_ = next_skip_;
      next_skip_ = std::min(2 * next_skip_, k_max_skip);
    }
    return lookup_.propose(history, max_draft, cancel);
  }
  next_skip_ = 1;
  ++stats_.model_drafts;
  stats_.tokens_proposed += static_cast<int64_t>(draft.size());
  return draft;
}

std::string model_drafter::describe() const { return backend_->describe(); }

}  // namespace qf::server::completion
