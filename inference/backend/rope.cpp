// RoPE host math (see rope.h). The table is computed per position and shared
// by every head of a token, so rotating costs one cos/sin per pair and token.
#include "inference/backend/rope.h"

#include <algorithm>
#include <cmath>

namespace qf::infer {

namespace {
// The pair index whose wavelength makes n_rot_turns turns over n_ctx_orig (ggml's formula).
float corr_dim(int64_t n_rot, int64_t n_ctx_orig, float turns, float base) {
  constexpr float k_pi = 3.14159265358979323846f;
  return static_cast<float>(n_rot) * std::log(static_cast<float>(n_ctx_orig) / (turns * 2 * k_pi)) /
         (2 * std::log(base));
}
}  // namespace

void yarn_corr_dims(int64_t n_rot, int64_t n_ctx_orig, float freq_base, float beta_fast, float beta_slow,
                    float& low, float& high) {
  low = std::max(0.0f, std::floor(corr_dim(n_rot, n_ctx_orig, beta_fast, freq_base)));
  high = std::min(static_cast<float>(n_rot - 1), std::ceil(corr_dim(n_rot, n_ctx_orig, beta_slow, freq_base)));
}

float rope_mscale(const rope_params& p) {
  if (p.ext_factor == 0) return p.attn_factor;
  return p.attn_factor * (1.0f + 0.1f * std::log(1.0f / p.freq_scale));
}

void rope_cos_sin(int64_t pos, const rope_params& p, float* cs, const float* factors, bool shift) {
  const int64_t half = p.n_rot / 2;
  if (p.ext_factor != 0) {
    const float mscale = shift ? 1.0f : rope_mscale(p);
    const float span = std::max(0.001f, p.corr_high - p.corr_low);
    for (int64_t i = 0; i < half; ++i) {
      const float freq = 1.0f / std::pow(p.freq_base, static_cast<float>(2 * i) / static_cast<float>(p.n_rot));
      float extrap = static_cast<float>(pos) * freq;
      if (factors) extrap /= factors[i];
      const float interp = p.freq_scale * extrap;
      const float ramp = 1.0f - std::min(1.0f, std::max(0.0f, (static_cast<float>(i) - p.corr_low) / span));
      const float mix = ramp * p.ext_factor;
      const float theta = interp * (1 - mix) + extrap * mix;
      cs[2 * i] = std::cos(theta) * mscale;
      cs[2 * i + 1] = std::sin(theta) * mscale;
    }
    return;
  }
  const float mag = shift ? 1.0f : p.attn_factor;
  for (int64_t i = 0; i < half; ++i) {
    // As llama2.c: freq = 1 / base^(2i / n_rot), angle = pos * freq.
    const float freq = 1.0f / std::pow(p.freq_base, static_cast<float>(2 * i) / static_cast<float>(p.n_rot));
    float theta = static_cast<float>(pos) * freq * p.freq_scale;
    if (factors) theta /= factors[i];
    cs[2 * i] = mag == 1.0f ? std::cos(theta) : std::cos(theta) * mag;
    cs[2 * i + 1] = mag == 1.0f ? std::sin(theta) : std::sin(theta) * mag;
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
