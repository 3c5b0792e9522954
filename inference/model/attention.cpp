// Host attention for one query head (see attention.h): dot products against
// the cached keys with the F16 SIMD kernels, a max-subtracted softmax, and an
// accumulation of the value rows.
#include "inference/model/attention.h"

#include <algorithm>

#include "inference/backend/cpu/ops.h"

namespace qf::infer {

void attend_head_f16(const float* q, const fp16_t* k, const fp16_t* v, int64_t row_stride, int64_t n_kv,
                     int64_t head_dim, float scale, float* scores, float* out) {
  for (int64_t j = 0; j < n_kv; ++j) scores[j] = scale * cpu::dot_f16_f32(k + j * row_stride, q, head_dim);
  cpu::softmax(scores, n_kv);
  std::fill(out, out + head_dim, 0.0f);
  for (int64_t j = 0; j < n_kv; ++j) cpu::axpy_f16(scores[j], v + j * row_stride, out, head_dim);
}

void attend_head_f32(const float* q, const float* k, const float* v, int64_t row_stride, int64_t n_kv,
                     int64_t head_dim, float scale, float* scores, float* out) {
  for (int64_t j = 0; j < n_kv; ++j) scores[j] = scale * cpu::dot_f32(k + j * row_stride, q, head_dim);
  cpu::softmax(scores, n_kv);
  std::fill(out, out + head_dim, 0.0f);
  for (int64_t j = 0; j < n_kv; ++j) {
    const float p = scores[j];
    const float* vr = v + j * row_stride;
    for (int64_t d = 0; d < head_dim; ++d) out[d] += p * vr[d];
  }
}

}  // namespace qf::infer
