// Host attention for a group of query heads (see attention.h): the portable
// path calls the F16 SIMD kernels row by row; the AVX-512 or AVX2 path is
// picked at run time when the CPU supports it.
#include "inference/backend/cpu/attention.h"

#include <algorithm>

#include "inference/backend/cpu/ops.h"

namespace qf::infer {

bool attention_avx2_usable(int64_t head_dim) {
  static const bool cpu_ok = [] {
    const auto& f = cpu::detect_cpu();
    return f.avx2 && f.fma && f.f16c;
  }();
  return cpu_ok && head_dim % 8 == 0 && head_dim <= 256;
}

bool attention_avx512_usable(int64_t head_dim) {
  static const bool cpu_ok = cpu::detect_cpu().avx512f;
  return cpu_ok && (head_dim == 32 || head_dim == 64 || head_dim == 96 || head_dim == 128);
}

void attend_group_f16_generic(const float* q, int64_t n_q, const fp16_t* k, const fp16_t* v, const kv_cells& cells,
                              int64_t n_kv, int64_t head_dim, float scale, float* scores, float* out) {
  for (int64_t h = 0; h < n_q; ++h) {
    const float* qh = q + h * head_dim;
    float* s = scores + h * n_kv;
    float* oh = out + h * head_dim;
    for (int64_t j = 0; j < n_kv; ++j) s[j] = scale * cpu::dot_f16_f32(k + cells.offset(j), qh, head_dim);
    cpu::softmax(s, n_kv);
    std::fill(oh, oh + head_dim, 0.0f);
    for (int64_t j = 0; j < n_kv; ++j) cpu::axpy_f16(s[j], v + cells.offset(j), oh, head_dim);
  }
}

void attend_group_f16(const float* q, int64_t n_q, const fp16_t* k, const fp16_t* v, const kv_cells& cells,
                      int64_t n_kv, int64_t head_dim, float scale, float* scores, float* out) {
  if (attention_avx512_usable(head_dim))
    attend_group_f16_avx512(q, n_q, k, v, cells, n_kv, head_dim, scale, scores, out);
  else if (attention_avx2_usable(head_dim))
    attend_group_f16_avx2(q, n_q, k, v, cells, n_kv, head_dim, scale, scores, out);
  else
    attend_group_f16_generic(q, n_q, k, v, cells, n_kv, head_dim, scale, scores, out);
}

void attend_group_f32(const float* q, int64_t n_q, const float* k, const float* v, const kv_cells& cells,
                      int64_t n_kv, int64_t head_dim, float scale, float* scores, float* out) {
  for (int64_t h = 0; h < n_q; ++h) {
    const float* qh = q + h * head_dim;
    float* s = scores + h * n_kv;
    float* oh = out + h * head_dim;
    for (int64_t j = 0; j < n_kv; ++j) s[j] = scale * cpu::dot_f32(k + cells.offset(j), qh, head_dim);
    cpu::softmax(s, n_kv);
    std::fill(oh, oh + head_dim, 0.0f);
    for (int64_t j = 0; j < n_kv; ++j) {
      const float p = s[j];
      const float* vr = v + cells.offset(j);
      for (int64_t d = 0; d < head_dim; ++d) oh[d] += p * vr[d];
    }
  }
}

}  // namespace qf::infer
