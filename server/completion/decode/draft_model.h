// Draft-model speculation: a smaller model of the same family (same
// tokenizer, e.g. a 0.5B drafting for a 1.5B) proposes the next tokens.
//
// The drafter keeps one KV sequence of its own. Each proposal first brings
// it up to the history -- the longest common prefix stays cached, so after a
// verified step only the accepted tokens and the target's correction are
// evaluated (one small batch) -- then decodes greedily, one token per step,
// while the draft model is confident (probability >= min_prob) and the
// draft is shorter than asked. A history that has moved far from the cached
// one (a new prompt layout, another document) is not caught up inside a
// keystroke's budget: the proposal falls back to prompt lookup and warm()
// catches up in the background. A draft model that keeps having no
// confident token is asked less often (it skips 1, 2, 4, then 8 proposals,
// which prompt lookup makes), so an unhelpful one costs little. Nothing
// here affects what is decoded: the target verifies every draft
// (generator.cpp).
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "server/completion/decode/drafter.h"
#include "server/completion/api/lm.h"

namespace qf::server::completion {

// Why `draft` cannot draft for `target` ("" when it can): the tokenizers must
// be the same (size, every token's bytes, the special tokens).
std::string draft_vocab_mismatch(const lm_vocab& target, const lm_vocab& draft);

struct draft_model_stats {
  int64_t proposals = 0;      // propose() calls
  int64_t model_drafts = 0;   // proposals the draft model made (not prompt lookup)
  int64_t tokens_proposed = 0;
  int64_t caught_up = 0;      // history tokens evaluated by the draft model
  int64_t cold = 0;           // proposals that fell back because the cache was too far behind
  int64_t skipped = 0;        // proposals left to prompt lookup after unconfident ones
};

class model_drafter final : public drafter {
 public:
  // The most history tokens a proposal evaluates to catch up; more is left to warm().
  static constexpr int64_t k_inline_catch_up = 16;
  // The most proposals skipped after the draft model had no confident token.
  static constexpr int k_max_skip = 8;

  model_drafter(std::unique_ptr<lm_backend> backend, int64_t n_ctx, int ngram, double min_prob);

  std::vector<int32_t> propose(std::span<const int32_t> history, int max_draft, const cancel_token& cancel) override;
  // Whether the cached sequence is more than k_inline_catch_up tokens behind `history`.
  bool behind(std::span<const int32_t> history) const;
  // Catches the cached sequence up with `history` in chunks of `chunk` tokens
  // (background work). Returns false when cancelled before the end.
  bool warm(std::span<const int32_t> history, int64_t chunk, const cancel_token& cancel);

  // A new, empty KV sequence of n_ctx tokens (at most the draft model's training context).
  void resize(int64_t n_ctx);
  void set_min_prob(double p) { min_prob_ = p; }
  void set_ngram(int n) { lookup_ = lookup_drafter(n); }
  const lm_backend& backend() const { return *backend_; }
  const draft_model_stats& stats() const { return stats_; }
  std::string describe() const;

 private:
  // The longest prefix of the cache shared with `history`, leaving at least
  // its last token to evaluate (its row gives the first draft token).
  int64_t common_prefix(std::span<const int32_t> history) const;
  // Cuts the cache back to common_prefix(history); returns its length.
  int64_t keep_common(std::span<const int32_t> history);

  std::unique_ptr<lm_backend> backend_;
  std::unique_ptr<lm_sequence> seq_;
  lookup_drafter lookup_;
  double min_prob_;
  draft_model_stats stats_;
  int skip_ = 0;       // proposals still to leave to prompt lookup
  int next_skip_ = 1;  // how many the next unconfident proposal skips
};

}  // namespace qf::server::completion
