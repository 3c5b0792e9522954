// AVX2/FMA/F16C attention for a group of query heads sharing one KV head (see
// attention.h). Each F16 key and value row is converted to f32 once and used
// by every head of the group; the loops over head_dim are inlined (no call per
// cell), which is what dominates attention at long contexts, and the rows are
// prefetched ahead of use.
// Compiled with AVX2 flags (file suffix); called only after CPU detection.
#include "inference/backend/cpu/ops.h"
#include "inference/backend/cpu/attention.h"

#if defined(__AVX2__) && defined(__FMA__) && defined(__F16C__)
#include <immintrin.h>

#include <cmath>

#include "inference/backend/cpu/simd_reduce.h"

namespace qf::infer {

namespace {

using cpu::simd::hsum;

// e^x for x <= 0 (softmax inputs after subtracting the max), Cephes-style:
// x = n ln2 + r with |r| <= ln2/2, e^r by a degree-6 polynomial, 2^n through
// the exponent bits; below -87 the result is 0. Relative error ~1e-7.
inline __m256 exp_nonpos(__m256 x) {
  const __m256 lo = _mm256_set1_ps(-87.0f);
  const __m256 underflow = _mm256_cmp_ps(x, lo, _CMP_LT_OQ);
  x = _mm256_max_ps(x, lo);
  const __m256 n = _mm256_round_ps(_mm256_mul_ps(x, _mm256_set1_ps(1.44269504088896341f)),
                                   _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m256 r = _mm256_fnmadd_ps(n, _mm256_set1_ps(0.693359375f), x);
  r = _mm256_fnmadd_ps(n, _mm256_set1_ps(-2.12194440e-4f), r);
  __m256 p = _mm256_set1_ps(1.9875691500e-4f);
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.3981999507e-3f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(8.3334519073e-3f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(4.1665795894e-2f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.6666665459e-1f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(5.0000001201e-1f));
  const __m256 r2 = _mm256_mul_ps(r, r);
  const __m256 y = _mm256_add_ps(_mm256_fmadd_ps(p, r2, r), _mm256_set1_ps(1.0f));
  const __m256i e = _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127)), 23);
  return _mm256_andnot_ps(underflow, _mm256_mul_ps(y, _mm256_castsi256_ps(e)));
}

// In-place softmax of x[0..n), max-subtracted.
void softmax_avx2(float* x, int64_t n) {
  const float mx = cpu::max_value(x, n);
  const __m256 vmx = _mm256_set1_ps(mx);
  __m256 vs = _mm256_setzero_ps();
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256 e = exp_nonpos(_mm256_sub_ps(_mm256_loadu_ps(x + i), vmx));
    _mm256_storeu_ps(x + i, e);
    vs = _mm256_add_ps(vs, e);
  }
  float sum = hsum(vs);
  for (; i < n; ++i) sum += (x[i] = std::exp(x[i] - mx));
  const __m256 inv = _mm256_set1_ps(1.0f / sum);
  for (i = 0; i + 8 <= n; i += 8) _mm256_storeu_ps(x + i, _mm256_mul_ps(_mm256_loadu_ps(x + i), inv));
  for (; i < n; ++i) x[i] *= 1.0f / sum;
}

}  // namespace

void attend_group_f16_avx2(const float* q, int64_t n_q, const fp16_t* k, const fp16_t* v, const kv_cells& cells,
                           int64_t n_kv, int64_t head_dim, float scale, float* scores, float* out) {
  const int64_t nb = head_dim / 8;  // head_dim % 8 == 0, <= 256 (attention_avx2_usable)
  alignas(32) float row[4][256];

  auto load_row = [&](const fp16_t* src, float* dst) {
    for (int64_t b = 0; b < nb; ++b)
      _mm256_store_ps(dst + 8 * b, _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(src + 8 * b))));
  };

  // Rows j..j+3 into row[0..3], asking for the rows k_attention_prefetch_rows ahead.
  auto load_rows4 = [&](const fp16_t* base, int64_t j) {
    const bool ahead_ok = j + k_attention_prefetch_rows + 4 <= n_kv;
    for (int r = 0; r < 4; ++r) {
      if (ahead_ok) {
        const char* ahead = reinterpret_cast<const char*>(base + cells.offset(j + k_attention_prefetch_rows + r));
        for (int64_t o = 0; o < 2 * head_dim; o += 64) _mm_prefetch(ahead + o, _MM_HINT_T0);
      }
      load_row(base + cells.offset(j + r), row[r]);
    }
  };

  // scores[h][j] = scale * q_h . K_j, four cells at a time: the four dot
  // products of a head are reduced together (three horizontal adds for four sums).
  int64_t j = 0;
  for (; j + 4 <= n_kv; j += 4) {
    load_rows4(k, j);
    for (int64_t h = 0; h < n_q; ++h) {
      const float* qh = q + h * head_dim;
      __m256 a0 = _mm256_setzero_ps(), a1 = _mm256_setzero_ps(), a2 = _mm256_setzero_ps(), a3 = _mm256_setzero_ps();
      for (int64_t b = 0; b < nb; ++b) {
        const __m256 qv = _mm256_loadu_ps(qh + 8 * b);
        a0 = _mm256_fmadd_ps(qv, _mm256_load_ps(row[0] + 8 * b), a0);
        a1 = _mm256_fmadd_ps(qv, _mm256_load_ps(row[1] + 8 * b), a1);
        a2 = _mm256_fmadd_ps(qv, _mm256_load_ps(row[2] + 8 * b), a2);
        a3 = _mm256_fmadd_ps(qv, _mm256_load_ps(row[3] + 8 * b), a3);
      }
      // lanes: [s0 s1 s2 s3 | s0 s1 s2 s3] partial sums of the low and high halves
      const __m256 h4 = _mm256_hadd_ps(_mm256_hadd_ps(a0, a1), _mm256_hadd_ps(a2, a3));
      const __m128 s4 = _mm_add_ps(_mm256_castps256_ps128(h4), _mm256_extractf128_ps(h4, 1));
      _mm_storeu_ps(scores + h * n_kv + j, _mm_mul_ps(s4, _mm_set1_ps(scale)));
    }
  }
  for (; j < n_kv; ++j) {
    load_row(k + cells.offset(j), row[0]);
    for (int64_t h = 0; h < n_q; ++h) {
      const float* qh = q + h * head_dim;
      __m256 a0 = _mm256_setzero_ps();
      for (int64_t b = 0; b < nb; ++b) a0 = _mm256_fmadd_ps(_mm256_loadu_ps(qh + 8 * b), _mm256_load_ps(row[0] + 8 * b), a0);
      scores[h * n_kv + j] = scale * hsum(a0);
    }
  }

  for (int64_t h = 0; h < n_q; ++h) softmax_avx2(scores + h * n_kv, n_kv);

  // out_h = sum_j p[h][j] * V_j, four cells per pass over each head's output.
  for (int64_t i = 0; i < n_q * head_dim; i += 8) _mm256_storeu_ps(out + i, _mm256_setzero_ps());
  for (j = 0; j + 4 <= n_kv; j += 4) {
    load_rows4(v, j);
    for (int64_t h = 0; h < n_q; ++h) {
      const float* ph = scores + h * n_kv + j;
      const __m256 p0 = _mm256_set1_ps(ph[0]), p1 = _mm256_set1_ps(ph[1]);
      const __m256 p2 = _mm256_set1_ps(ph[2]), p3 = _mm256_set1_ps(ph[3]);
      float* oh = out + h * head_dim;
      for (int64_t b = 0; b < nb; ++b) {
        __m256 o = _mm256_loadu_ps(oh + 8 * b);
        o = _mm256_fmadd_ps(p0, _mm256_load_ps(row[0] + 8 * b), o);
        o = _mm256_fmadd_ps(p1, _mm256_load_ps(row[1] + 8 * b), o);
        o = _mm256_fmadd_ps(p2, _mm256_load_ps(row[2] + 8 * b), o);
        o = _mm256_fmadd_ps(p3, _mm256_load_ps(row[3] + 8 * b), o);
        _mm256_storeu_ps(oh + 8 * b, o);
      }
    }
  }
  for (; j < n_kv; ++j) {
    load_row(v + cells.offset(j), row[0]);
    for (int64_t h = 0; h < n_q; ++h) {
      const __m256 p = _mm256_set1_ps(scores[h * n_kv + j]);
      float* oh = out + h * head_dim;
      for (int64_t b = 0; b < nb; ++b)
        _mm256_storeu_ps(oh + 8 * b, _mm256_fmadd_ps(p, _mm256_load_ps(row[0] + 8 * b), _mm256_loadu_ps(oh + 8 * b)));
    }
  }
}

}  // namespace qf::infer
#else  // not an x86 build with AVX2 flags: never selected (attention_avx2_usable is false)
namespace qf::infer {
void attend_group_f16_avx2(const float* q, int64_t n_q, const fp16_t* k, const fp16_t* v, const kv_cells& cells,
                           int64_t n_kv, int64_t head_dim, float scale, float* scores, float* out) {
  attend_group_f16_generic(q, n_q, k, v, cells, n_kv, head_dim, scale, scores, out);
}
}  // namespace qf::infer
#endif
