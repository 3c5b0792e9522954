// Rotary position embedding (RoPE): the parameters and the host math shared
// by the CPU backend and the tests.
//
// Pair i (i < n_rot/2) of a head rotates by theta_i = pos * freq_scale *
// freq_base^(-2i/n_rot). In the `norm` style (llama) the pair is the adjacent
// elements (2i, 2i+1); in the `neox` style (qwen2) it is (i, i + n_rot/2).
// Elements at n_rot and beyond are not rotated. The frequency is computed as
// llama2.c does (1 / powf(base, 2i / n_rot)), so the llama path follows it
// exactly. Rotations compose: rotating a key written at position p by
// delta * theta gives the key at p + delta (up to rounding), which is how the
// KV cache shifts a kept range of tokens.
//
// Llama 3.1-style frequency factors (GGUF tensor rope_freqs.weight, n_rot/2
// floats) divide each pair's angle: theta_i / factor_i.
//
// YaRN (ext_factor != 0), as ggml's rope defines it: with theta_e = pos *
// freq_i (/ factor_i) the extrapolated angle and theta_l = freq_scale * theta_e
// the interpolated one, pair i turns by theta_l (1 - r_i) + theta_e r_i, r_i =
// ext_factor * (1 - clamp((i - corr_low) / max(0.001, corr_high - corr_low),
// 0, 1)): pairs below corr_low (fast, high frequency) keep their angle, those
// above corr_high are interpolated. cos and sin are then scaled by mscale =
// attn_factor * (1 + 0.1 ln(1 / freq_scale)), so q.k grows by mscale^2 (the
// attention temperature). Without YaRN mscale = attn_factor (1 for all but
// YaRN files). The corrected dims come from yarn_corr_dims().
#pragma once

#include <cstdint>

namespace qf::infer {

class buffer;  // inference/backend/backend.h

enum class rope_style {
  norm,  // llama: rotates adjacent pairs (2i, 2i+1)
  neox,  // qwen2 / gpt-neox: rotates halves (i, i + n_rot/2)
};

struct rope_params {
  rope_style style = rope_style::norm;
  int64_t n_rot = 0;  // rotated dimensions per head (<= head_dim, even)
  float freq_base = 10000;
  float freq_scale = 1;
  const buffer* freq_factors = nullptr;  // backend f32 [n_rot/2], or none
  float ext_factor = 0;   // YaRN ramp weight; 0: plain (linear) scaling
  float attn_factor = 1;  // cos/sin magnitude (YaRN's mscale before its log term)
  float corr_low = 0, corr_high = 0;  // YaRN correction range in pair indices

  bool operator==(const rope_params&) const = default;
};

// YaRN's correction range (ggml_rope_yarn_corr_dims): the pair index at which
// a pair makes beta_fast (low end, floored) and beta_slow (high end, ceiled)
// turns over the original context n_ctx_orig, clamped to [0, n_rot - 1].
void yarn_corr_dims(int64_t n_rot, int64_t n_ctx_orig, float freq_base, float beta_fast, float beta_slow,
                    float& low, float& high);

// The magnitude rope_cos_sin gives cos and sin (1 without YaRN and attn_factor).
float rope_mscale(const rope_params& p);

// cs[2i], cs[2i+1] = cos, sin of (pos * freq_scale * freq_i) for i < n_rot/2
// (YaRN: the mixed angle, times rope_mscale). `pos` may be negative (a shift
// back). factors: host copy of p.freq_factors, or null. `shift`: a pure
// rotation by pos (magnitude 1), for re-rotating cached keys that already
// carry the magnitude.
void rope_cos_sin(int64_t pos, const rope_params& p, float* cs, const float* factors = nullptr, bool shift = false);

// Rotates n_heads heads of head_dim floats each, in place, with a table from rope_cos_sin.
void rope_apply(float* x, int64_t n_heads, int64_t head_dim, const float* cs, const rope_params& p);

}  // namespace qf::infer
