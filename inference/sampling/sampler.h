// Token sampling from logits: greedy, temperature, top-k, top-p (nucleus),
// min-p, repetition penalty, and a seeded RNG so that a given seed always
// gives the same choices (the generator and the float-from-bits conversion are
// ours, not the standard library's distributions, so results are the same on
// every platform).
//
// Order of the chain (as llama.cpp's default): repetition penalty -> top-k ->
// temperature -> softmax -> top-p -> min-p -> draw. temperature <= 0 is greedy:
// the argmax of the penalized logits, lowest id on ties.
#pragma once

#include <cstdint>
#include <random>
#include <span>
#include <vector>

namespace qf::infer {

struct sampler_params {
  float temperature = 0;      // <= 0: greedy
  int top_k = 40;             // <= 0 or >= n_vocab: off
  float top_p = 1;            // >= 1: off
  float min_p = 0;            // <= 0: off; keeps p >= min_p * p_max
  float repeat_penalty = 1;   // 1: off; > 1 penalizes tokens in the last repeat_last_n of history
  int repeat_last_n = 64;     // 0: off; < 0: whole history
  uint64_t seed = 0;
};

// The log-probability of a row's largest logit under its softmax (<= 0; NaN
// for an empty row): the host form of backend::top_logprob_rows.
float top_logprob(std::span<const float> logits);
// log softmax(logits)[id] (<= 0; NaN when id is out of range).
float token_logprob(std::span<const float> logits, int32_t id);

class sampler {
 public:
  explicit sampler(const sampler_params& p);
  // Picks a token from `logits` (one row, n_vocab long). `history` is the
  // sequence so far (prompt + generated), used by the repetition penalty.
  int32_t sample(std::span<const float> logits, std::span<const int32_t> history);
  void reseed(uint64_t seed);
  const sampler_params& params() const { return p_; }

 private:
  struct candidate { int32_t id; float logit; float p; };
  double next_uniform();  // in [0, 1), 53 random bits
  sampler_params p_;
  std::mt19937_64 rng_;
  std::vector<candidate> cand_;  // scratch, reused across calls
  std::vector<float> pen_;       // scratch: penalized logits
};

}  // namespace qf::infer
