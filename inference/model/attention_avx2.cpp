// AVX2/FMA/F16C attention for a group of query heads sharing one KV head (see
// attention.h). Each F16 key and value row is converted to f32 once and used
// by every head of the group; the loops over head_dim are inlined (no call per
// cell), which is what dominates attention at long contexts.
// Compiled with AVX2 flags (file suffix); called only after CPU detection.
#include "inference/backend/cpu/ops.h"
#include "inference/model/attention.h"

#if defined(__AVX2__) && defined(__FMA__) && defined(__F16C__)
#include <immintrin.h>

namespace qf::infer {

namespace {
inline float hsum(__m256 v) {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}
}  // namespace

void attend_group_f16_avx2(const float* q, int64_t n_q, const fp16_t* k, const fp16_t* v, int64_t row_stride,
                           int64_t n_kv, int64_t head_dim, float scale, float* scores, float* out) {
  const int64_t nb = head_dim / 8;  // head_dim % 8 == 0, <= 256 (attention_avx2_usable)
  alignas(32) float row[256];

  // scores[h][j] = scale * q_h . K_j
  for (int64_t j = 0; j < n_kv; ++j) {
    const fp16_t* kj = k + j * row_stride;
    for (int64_t b = 0; b < nb; ++b)
      _mm256_store_ps(row + 8 * b, _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(kj + 8 * b))));
    for (int64_t h = 0; h < n_q; ++h) {
      const float* qh = q + h * head_dim;
      __m256 a0 = _mm256_setzero_ps(), a1 = _mm256_setzero_ps();
      int64_t b = 0;
      for (; b + 1 < nb; b += 2) {
        a0 = _mm256_fmadd_ps(_mm256_loadu_ps(qh + 8 * b), _mm256_load_ps(row + 8 * b), a0);
        a1 = _mm256_fmadd_ps(_mm256_loadu_ps(qh + 8 * b + 8), _mm256_load_ps(row + 8 * b + 8), a1);
      }
      if (b < nb) a0 = _mm256_fmadd_ps(_mm256_loadu_ps(qh + 8 * b), _mm256_load_ps(row + 8 * b), a0);
      scores[h * n_kv + j] = scale * hsum(_mm256_add_ps(a0, a1));
    }
  }

  for (int64_t h = 0; h < n_q; ++h) cpu::softmax(scores + h * n_kv, n_kv);

  // out_h = sum_j p[h][j] * V_j
  for (int64_t i = 0; i < n_q * head_dim; i += 8) _mm256_storeu_ps(out + i, _mm256_setzero_ps());
  for (int64_t j = 0; j < n_kv; ++j) {
    const fp16_t* vj = v + j * row_stride;
    for (int64_t b = 0; b < nb; ++b)
      _mm256_store_ps(row + 8 * b, _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(vj + 8 * b))));
    for (int64_t h = 0; h < n_q; ++h) {
      const __m256 p = _mm256_set1_ps(scores[h * n_kv + j]);
      float* oh = out + h * head_dim;
      for (int64_t b = 0; b < nb; ++b)
        _mm256_storeu_ps(oh + 8 * b, _mm256_fmadd_ps(p, _mm256_load_ps(row + 8 * b), _mm256_loadu_ps(oh + 8 * b)));
    }
  }
}

}  // namespace qf::infer
#else  // not an x86 build with AVX2 flags: never selected (attention_avx2_usable is false)
namespace qf::infer {
void attend_group_f16_avx2(const float* q, int64_t n_q, const fp16_t* k, const fp16_t* v, int64_t row_stride,
                           int64_t n_kv, int64_t head_dim, float scale, float* scores, float* out) {
  attend_group_f16_generic(q, n_q, k, v, row_stride, n_kv, head_dim, scale, scores, out);
}
}  // namespace qf::infer
#endif
