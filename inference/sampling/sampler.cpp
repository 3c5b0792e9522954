// sampler (see sampler.h). All filters work on one candidate list that is
// kept in a scratch vector between calls (no allocation per token once warm).
#include "inference/sampling/sampler.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

namespace qf::infer {

float top_logprob(std::span<const float> logits) {
  if (logits.empty()) return std::numeric_limits<float>::quiet_NaN();
  float m = -std::numeric_limits<float>::infinity();
  for (float x : logits) m = std::max(m, x);
  if (m == -std::numeric_limits<float>::infinity()) return -std::log(static_cast<float>(logits.size()));
  double sum = 0;  // float exps, summed in double
  for (float x : logits) sum += std::exp(x - m);
  return static_cast<float>(-std::log(sum));
}

float token_logprob(std::span<const float> logits, int32_t id) {
  if (id < 0 || static_cast<size_t>(id) >= logits.size()) return std::numeric_limits<float>::quiet_NaN();
  const float m = *std::max_element(logits.begin(), logits.end());
  if (m == -std::numeric_limits<float>::infinity()) return top_logprob(logits);
  return logits[static_cast<size_t>(id)] - m + top_logprob(logits);
}

sampler::sampler(const sampler_params& p) : p_(p), rng_(p.seed) {}

void sampler::reseed(uint64_t seed) {
  p_.seed = seed;
  rng_.seed(seed);
}

double sampler::next_uniform() { return static_cast<double>(rng_() >> 11) * 0x1.0p-53; }

int32_t sampler::sample(std::span<const float> logits, std::span<const int32_t> history) {
  const int64_t n_vocab = static_cast<int64_t>(logits.size());
  if (n_vocab == 0) throw std::invalid_argument("sampler: empty logits");

  // 1. Repetition penalty (as llama.cpp / CTRL): a logit of a recent token is
  //    divided by the penalty when positive, multiplied when negative.
  const float* lg = logits.data();
  if (p_.repeat_penalty != 1.0f && p_.repeat_last_n != 0 && !history.empty()) {
    pen_.assign(logits.begin(), logits.end());
    const size_t n_hist = p_.repeat_last_n < 0 ? history.size()
                                                : std::min(history.size(), static_cast<size_t>(p_.repeat_last_n));
    for (size_t i = history.size() - n_hist; i < history.size(); ++i) {
      const int32_t id = history[i];
      if (id < 0 || id >= n_vocab) continue;
      float& x = pen_[static_cast<size_t>(id)];
      // A token seen several times is penalized once (the orig value decides the direction).
      const float orig = logits[static_cast<size_t>(id)];
      x = orig > 0 ? orig / p_.repeat_penalty : orig * p_.repeat_penalty;
    }
    lg = pen_.data();
  }

  // 2. Greedy: argmax, lowest id on ties.
  if (p_.temperature <= 0) {
    int32_t best = 0;
    for (int64_t i = 1; i < n_vocab; ++i)
      if (lg[i] > lg[best]) best = static_cast<int32_t>(i);
    return best;
  }

  cand_.resize(static_cast<size_t>(n_vocab));
  for (int64_t i = 0; i < n_vocab; ++i) cand_[static_cast<size_t>(i)] = {static_cast<int32_t>(i), lg[i], 0.0f};
  // Ordered by logit descending, ties by id ascending: a total order, so the result is deterministic.
  auto by_logit = [](const candidate& a, const candidate& b) {
    return a.logit > b.logit || (a.logit == b.logit && a.id < b.id);
  };
  // Only a sorted prefix of the candidates is kept in order, grown on demand:
  // a 150k vocabulary is never fully sorted unless a filter needs it.
  size_t n = cand_.size(), sorted = 0;
  auto ensure_sorted = [&](size_t m) {
    m = std::min(m, n);
    if (m <= sorted) return;
    if (m < n) std::nth_element(cand_.begin(), cand_.begin() + static_cast<std::ptrdiff_t>(m),
                                cand_.begin() + static_cast<std::ptrdiff_t>(n), by_logit);
    std::sort(cand_.begin(), cand_.begin() + static_cast<std::ptrdiff_t>(m), by_logit);
    sorted = m;
  };

  // 3. Top-k.
  if (p_.top_k > 0 && static_cast<size_t>(p_.top_k) < n) {
    ensure_sorted(static_cast<size_t>(p_.top_k));
    n = static_cast<size_t>(p_.top_k);
  }
  ensure_sorted(1);

  // 4. Temperature and softmax (max-subtracted, in double for the sum).
  const float max_logit = cand_[0].logit;
  double sum = 0;
  for (size_t i = 0; i < n; ++i) {
    const double e = std::exp((static_cast<double>(cand_[i].logit) - max_logit) / p_.temperature);
    cand_[i].p = static_cast<float>(e);
    sum += e;
  }
  for (size_t i = 0; i < n; ++i) cand_[i].p = static_cast<float>(cand_[i].p / sum);

  // 5. Top-p: the smallest prefix (in order of probability) whose mass reaches top_p.
  if (p_.top_p < 1.0f) {
    double cum = 0;
    size_t keep = n;
    for (size_t i = 0; i < n; ++i) {
      if (i >= sorted) ensure_sorted(std::max<size_t>(64, 2 * sorted));
      cum += cand_[i].p;
      if (cum >= p_.top_p) {
        keep = i + 1;
        break;
      }
    }
    n = std::max<size_t>(keep, 1);
  }

  // 6. Min-p: drop candidates below min_p times the most likely one.
  if (p_.min_p > 0.0f) {
    const float threshold = p_.min_p * cand_[0].p;
    size_t keep = 1;
    for (;;) {
      if (keep >= n) break;
      if (keep >= sorted) ensure_sorted(std::max<size_t>(64, 2 * sorted));
      if (cand_[keep].p < threshold) break;
      ++keep;
    }
    n = keep;
  }

  // 7. Draw from the renormalized remainder.
  double total = 0;
  for (size_t i = 0; i < n; ++i) total += cand_[i].p;
  const double u = next_uniform() * total;
  double cum = 0;
  for (size_t i = 0; i < n; ++i) {
    cum += cand_[i].p;
    if (u < cum) return cand_[i].id;
  }
  return cand_[n - 1].id;
}

}  // namespace qf::infer
