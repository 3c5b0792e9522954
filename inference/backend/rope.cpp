// RoPE host math (see rope.h). The table is computed per position and shared
// by every head of a token, so rotating costs one cos/sin per pair and token.
#include "inference/backend/rope.h"

#include <cmath>

namespace qf::infer {

void rope_cos_sin(int64_t pos, const rope_params& p, float* cs, const float* factors) {
  const int64_t half = p.n_rot / 2;
  for (int64_t i = 0; i < half; ++i) {
    // As llama2.c: freq = 1 / base^(2i / n_rot), angle = pos * freq.
    const float freq = 1.0f / std::pow(p.freq_base, static_cast<float>(2 * i) / static_cast<float>(p.n_rot));
    float theta = static_cast<float>(pos) * freq * p.freq_scale;
    if (factors) theta /= factors[i];
    cs[2 * i] = std::cos(theta);
    cs[2 * i + 1] = std::sin(theta);
  }
}

void rope_apply(float* x, int64_t n_heads, int64_t head_dim, const float* cs, const rope_params& p) {
  const int64_t half = p.n_rot / 2;
  for (int64_t h = 0; h < n_heads; ++h) {
    float* v = x + h * head_dim;
    if (p.style == rope_style::norm) {
      for (int64_t i = 0; i < half; ++i) {
        const float c = cs[2 * i], s = cs[2 * i + 1];
        const float a = v[2 * i], b = v[2 * i + 1];
        v[2 * i] = a * c - b * s;
        v[2 * i + 1] = a * s + b * c;
      }
    } else {
      for (int64_t i = 0; i < half; ++i) {
        const float c = cs[2 * i], s = cs[2 * i + 1];
        const float a = v[i], b = v[i + half];
        v[i] = a * c - b * s;
        v[i + half] = a * s + b * c;
      }
    }
  }
}

}  // namespace qf::infer
