// Attention of one query head over the KV cache, on the host (used by the
// CPU backend, which spreads (token, head) pairs over its thread pool).
//
//   scores[j] = scale * q . K[j]          for cells j < n_kv
//   p         = softmax(scores)
//   out       = sum_j p[j] * V[j]
//
// K and V point at this head's KV head in cell 0; consecutive cells are
// `row_stride` elements apart (n_head_kv * head_dim).
#pragma once

#include <cstdint>

#include "inference/core/ggml_types.h"

namespace qf::infer {

// scores: scratch of n_kv floats. out: head_dim floats.
void attend_head_f16(const float* q, const fp16_t* k, const fp16_t* v, int64_t row_stride, int64_t n_kv,
                     int64_t head_dim, float scale, float* scores, float* out);
void attend_head_f32(const float* q, const float* k, const float* v, int64_t row_stride, int64_t n_kv,
                     int64_t head_dim, float scale, float* scores, float* out);

}  // namespace qf::infer
