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
};

// cs[2i], cs[2i+1] = cos, sin of (pos * freq_scale * freq_i) for i < n_rot/2.
// `pos` may be negative (a shift back). factors: host copy of p.freq_factors, or null.
void rope_cos_sin(int64_t pos, const rope_params& p, float* cs, const float* factors = nullptr);

// Rotates n_heads heads of head_dim floats each, in place, with a table from rope_cos_sin.
void rope_apply(float* x, int64_t n_heads, int64_t head_dim, const float* cs, const rope_params& p);

}  // namespace qf::infer
