// Internal: block-level dequantizers, reference quantizers and helpers shared
// by the scalar and SIMD kernels. Layouts are those of ggml_types.h.
#pragma once

#include <cmath>
#include <cstdint>

#include "inference/core/ggml_types.h"

namespace qf::infer::cpu::detail {

// Round to nearest, ties to even (the default FP rounding mode).
inline int nearest_int(float f) { return static_cast<int>(std::nearbyint(f)); }

// Q4_K/Q5_K: the 8 six-bit scales and 8 six-bit mins packed in 12 bytes.
inline void unpack_scale_min_k4(const uint8_t* q, uint8_t* sc, uint8_t* mn) {
  for (int j = 0; j < 4; ++j) {
    sc[j] = q[j] & 63;
    mn[j] = q[j + 4] & 63;
  }
  for (int j = 4; j < 8; ++j) {
    sc[j] = static_cast<uint8_t>((q[j + 4] & 0xF) | ((q[j - 4] >> 6) << 4));
    mn[j] = static_cast<uint8_t>((q[j + 4] >> 4) | ((q[j] >> 6) << 4));
  }
}

void dequantize_row_q8_0(const block_q8_0* x, float* y, int64_t n);
void dequantize_row_q4_0(const block_q4_0* x, float* y, int64_t n);
void dequantize_row_q4_1(const block_q4_1* x, float* y, int64_t n);
void dequantize_row_q5_0(const block_q5_0* x, float* y, int64_t n);
void dequantize_row_q5_1(const block_q5_1* x, float* y, int64_t n);
void dequantize_row_q4_k(const block_q4_k* x, float* y, int64_t n);
void dequantize_row_q5_k(const block_q5_k* x, float* y, int64_t n);
void dequantize_row_q6_k(const block_q6_k* x, float* y, int64_t n);
void dequantize_row_q8_k(const block_q8_k* x, float* y, int64_t n);

void quantize_row_q8_0_ref(const float* x, block_q8_0* y, int64_t n);
void quantize_row_q4_0_ref(const float* x, block_q4_0* y, int64_t n);
void quantize_row_q4_1_ref(const float* x, block_q4_1* y, int64_t n);
void quantize_row_q5_0_ref(const float* x, block_q5_0* y, int64_t n);
void quantize_row_q5_1_ref(const float* x, block_q5_1* y, int64_t n);
void quantize_row_q4_k_ref(const float* x, block_q4_k* y, int64_t n);
void quantize_row_q5_k_ref(const float* x, block_q5_k* y, int64_t n);
void quantize_row_q6_k_ref(const float* x, block_q6_k* y, int64_t n);
void quantize_row_q8_k_ref(const float* x, block_q8_k* y, int64_t n);

// Q5_0/Q5_1: the 32 fifth bits of a block (bit j = element j).
inline uint32_t load_qh(const uint8_t* qh) {
  return static_cast<uint32_t>(qh[0]) | static_cast<uint32_t>(qh[1]) << 8 | static_cast<uint32_t>(qh[2]) << 16 |
         static_cast<uint32_t>(qh[3]) << 24;
}

// Activation layout for the 32-element weight types (q8_0, q4_0, q4_1,
// q5_0, q5_1): Q8_0 quantization (32-value blocks, fp16-rounded scale)
// stored as arrays so SIMD kernels load several blocks' scales and quants at
// once: nb floats d[b] (exactly the fp16 scale), nb floats s[b] = d[b] *
// sum(quants of block b) (lets kernels fold Q4_0's offset of 8, Q5_0's of 16
// and the Q4_1/Q5_1 min m: block dot = d_w * d[b] * sum(q_w * q) + m * s[b]),
// then the n int8 quants, then nb int32 sum(quants of block b) (lets the
// interleaved Q8_0 kernels take their +128 offset out exactly, repack_q8_0.h).
size_t act_q8_0_bytes(int64_t n);
void quantize_act_q8_0(const float* x, uint8_t* dst, int64_t n);
inline const float* act_q8_0_d(const uint8_t* a) { return reinterpret_cast<const float*>(a); }
inline const float* act_q8_0_s(const uint8_t* a, int64_t nb) { return reinterpret_cast<const float*>(a) + nb; }
inline const int8_t* act_q8_0_q(const uint8_t* a, int64_t nb) {
  return reinterpret_cast<const int8_t*>(a + nb * 2 * sizeof(float));
}
inline const int32_t* act_q8_0_sum(const uint8_t* a, int64_t nb) {
  return reinterpret_cast<const int32_t*>(a + nb * (2 * sizeof(float) + qk8_0));
}
// The arrays of NT tokens' Q8_0 activations, token t at acts + t * stride.
template <int NT>
struct act_q8_0_rows {
  const float* d[NT];
  const int8_t* q[NT];
  const int32_t* sum[NT];
  act_q8_0_rows(const uint8_t* acts, size_t stride, int64_t nb) {
    for (int t = 0; t < NT; ++t) {
      d[t] = act_q8_0_d(acts + t * stride);
      q[t] = act_q8_0_q(acts + t * stride, nb);
      sum[t] = act_q8_0_sum(acts + t * stride, nb);
    }
  }
};
// Activation layout for k-quant weights: nb block_q8_k.
size_t act_q8_k_bytes(int64_t n);
void quantize_act_q8_k(const float* x, uint8_t* dst, int64_t n);

}  // namespace qf::infer::cpu::detail
