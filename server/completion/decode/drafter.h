// Where the drafts of speculative decoding come from.
//
// Greedy decoding with speculation evaluates [next, d1..dk] in one batch and
// keeps the drafted tokens the model itself would have chosen (generator.cpp),
// so a drafter never changes the output, only how many steps it takes. Two
// drafters exist: prompt lookup (copy what followed the last n-gram earlier in
// the history; prompt_lookup.h) and a smaller model of the same family that
// decodes a few tokens ahead on its own KV sequence (draft_model.h).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "inference/core/cancellation.h"
#include "server/completion/decode/prompt_lookup.h"

namespace qf::server::completion {

class drafter {
 public:
  virtual ~drafter() = default;
  // Up to `max_draft` tokens likely to follow `history` (the sequence's
  // tokens and the token about to be evaluated). May evaluate a model of its
  // own; polls `cancel` and returns what it has when it is set.
  virtual std::vector<int32_t> propose(std::span<const int32_t> history, int max_draft,
                                       const cancel_token& cancel) = 0;
};

class lookup_drafter final : public drafter {
 public:
  explicit lookup_drafter(int ngram) : ngram_(ngram) {}
  std::vector<int32_t> propose(std::span<const int32_t> history, int max_draft, const cancel_token&) override {
    return prompt_lookup_draft(history, ngram_, max_draft);
  }

 private:
  int ngram_;
};

}  // namespace qf::server::completion
