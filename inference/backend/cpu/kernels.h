// Internal: the per-ISA kernel table behind ops.h.
//
// A weight-row kernel computes, for one weight row and nt <= k_max_tile
// activation rows (token t at acts + t * act_stride bytes), out[t] = row · act_t.
// Activations are in the layout matmul prepared for the weight type (see
// quants.h: act_q8_0 / act_q8_k, or plain floats for f32/f16/bf16 weights).
// Loading each weight block once for several tokens is what makes the prefill
// path faster than repeated GEMV. Each ISA level fills the entries it
// accelerates; missing entries fall back to the level below.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>

#include "inference/core/ggml_types.h"

namespace qf::infer::cpu::detail {

inline constexpr int k_max_tile = 4;

// GELU, tanh approximation (as ggml_gelu and GPT-2's "gelu_new"):
// 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))).
inline float gelu_tanh(float x) {
  constexpr float k_sqrt_2_over_pi = 0.79788456080286535588f;
  return 0.5f * x * (1.0f + std::tanh(k_sqrt_2_over_pi * x * (1.0f + 0.044715f * x * x)));
}

using row_dot_fn = void (*)(int64_t n, const void* w_row, const uint8_t* acts, size_t act_stride, int nt,
                            float* out);
// A row-group kernel does the same for the sixteen rows of one interleaved
// group (repack_q8_0.h, repack_q5_0x16.h, repack_q4_k.h, repack_q6_k.h): out[t * out_stride + r] = row r ·
// act_t, r < 16.
using group_dot_fn = void (*)(int64_t n, const void* w_group, const uint8_t* acts, size_t act_stride, int nt,
                              float* out, int64_t out_stride);

struct kernel_table {
  row_dot_fn dot_f32 = nullptr;
  row_dot_fn dot_f16 = nullptr;
  row_dot_fn dot_bf16 = nullptr;
  row_dot_fn dot_q8_0 = nullptr;
  row_dot_fn dot_q4_0 = nullptr;
  row_dot_fn dot_q4_1 = nullptr;
  row_dot_fn dot_q5_0 = nullptr;
  row_dot_fn dot_q5_1 = nullptr;
  row_dot_fn dot_q4_k = nullptr;
  row_dot_fn dot_q5_k = nullptr;
  row_dot_fn dot_q6_k = nullptr;
  // Q5_0 rows regrouped as in repack_q5_0.h (weights prepare_weight regrouped).
  row_dot_fn dot_q5_0x8 = nullptr;
  // Q8_0 rows interleaved as in repack_q8_0.h.
  group_dot_fn dot_q8_0x16 = nullptr;
  // Q5_0 rows interleaved as in repack_q5_0x16.h.
  group_dot_fn dot_q5_0x16 = nullptr;
  // Q4_K rows interleaved as in repack_q4_k.h.
  group_dot_fn dot_q4_kx16 = nullptr;
  // Q6_K rows interleaved as in repack_q6_k.h.
  group_dot_fn dot_q6_kx16 = nullptr;
  float (*vec_dot_f32)(const float*, const float*, int64_t) = nullptr;
  float (*vec_dot_f16_f32)(const fp16_t*, const float*, int64_t) = nullptr;
  void (*axpy_f16)(float, const fp16_t*, float*, int64_t) = nullptr;
  void (*f32_to_f16)(const float*, fp16_t*, int64_t) = nullptr;
  void (*f16_to_f32)(const fp16_t*, float*, int64_t) = nullptr;
  float (*sum_squares)(const float*, int64_t) = nullptr;
  void (*add)(const float*, const float*, float*, int64_t) = nullptr;
  void (*scale_mul)(const float*, const float*, float, float*, int64_t) = nullptr;  // y = x * w * s
  void (*silu_mul)(const float*, const float*, float*, int64_t) = nullptr;
  // out = gelu(x) * up (tanh approximation); up == nullptr: out = gelu(x).
  void (*gelu_mul)(const float*, const float*, float*, int64_t) = nullptr;
  void (*scale)(float*, float, int64_t) = nullptr;  // x *= s
  // sum exp(x[i] - max), each exp also stored in out[i] when out is set (out may be x)
  float (*exp_sub_sum)(const float* x, float max, int64_t n, float* out) = nullptr;
  // The largest x[i] (NaNs ignored); -inf for n == 0.
  float (*max_f32)(const float*, int64_t) = nullptr;
  // Activation quantizers (layouts in quants.h).
  void (*quantize_act_q8_0)(const float*, uint8_t*, int64_t) = nullptr;
  void (*quantize_act_q8_k)(const float*, uint8_t*, int64_t) = nullptr;
};

// Every table is complete after fill-in (scalar fills all entries).
const kernel_table& scalar_kernels();
void fill_avx2_kernels(kernel_table& t);        // quant_kernels_avx2.cpp (calls the next one)
void fill_avx2_float_kernels(kernel_table& t);  // float_kernels_avx2.cpp
void fill_avx2_act_quant(kernel_table& t);      // act_quant_avx2.cpp
// quant_kernels_avx512.cpp (calls the next one); prefetch_decode: the kernels
// ask for the weights ahead against one token too, not only against several.
void fill_avx512_kernels(kernel_table& t, bool prefetch_decode);
void fill_avx512_float_kernels(kernel_table& t);  // float_kernels_avx512.cpp

// Expands a kernel template K<NT>(n, w, acts, stride, out) into a row_dot_fn.
#define QF_ROW_DOT_TILES(name, K)                                                                   \
  void name(int64_t n, const void* w, const uint8_t* acts, size_t stride, int nt, float* out) {    \
    switch (nt) {                                                                                   \
      case 1: K<1>(n, w, acts, stride, out); break;                                                 \
      case 2: K<2>(n, w, acts, stride, out); break;                                                 \
      case 3: K<3>(n, w, acts, stride, out); break;                                                 \
      default: K<4>(n, w, acts, stride, out); break;                                                \
    }                                                                                               \
  }

// The same for a group kernel K<NT>(n, w, acts, stride, out, out_stride).
#define QF_GROUP_DOT_TILES(name, K)                                                                        \
  void name(int64_t n, const void* w, const uint8_t* acts, size_t stride, int nt, float* out, int64_t os) { \
    switch (nt) {                                                                                          \
      case 1: K<1>(n, w, acts, stride, out, os); break;                                                    \
      case 2: K<2>(n, w, acts, stride, out, os); break;                                                    \
      case 3: K<3>(n, w, acts, stride, out, os); break;                                                    \
      default: K<4>(n, w, acts, stride, out, os); break;                                                   \
    }                                                                                                      \
  }

// The table in use (chosen by CPU detection or set_kernel_level).
const kernel_table& active_kernels();

row_dot_fn row_dot_for(const kernel_table& t, ggml_type type);

}  // namespace qf::infer::cpu::detail
