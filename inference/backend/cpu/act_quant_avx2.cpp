// AVX2 activation quantizers for matmul: Q8_0 (as arrays, see quants.h) and
// Q8_K. Same scales as the scalar reference; quants are rounded to nearest
// even (the reference Q8_0 rounds ties away from zero, so an exact .5 tie can
// differ by one step, as in llama.cpp's own SIMD quantizer).
#include <immintrin.h>

#include <cstring>

#include "inference/backend/cpu/kernels.h"
#include "inference/backend/cpu/quants.h"
#include "inference/backend/cpu/simd_reduce.h"

namespace qf::infer::cpu::detail {
namespace {

using simd::hmax;
using simd::hmin;

inline int hsum_i32(__m256i v) {
  __m128i s = _mm_add_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
  s = _mm_add_epi32(s, _mm_shuffle_epi32(s, _MM_SHUFFLE(1, 0, 3, 2)));
  s = _mm_add_epi32(s, _mm_shuffle_epi32(s, _MM_SHUFFLE(2, 3, 0, 1)));
  return _mm_cvtsi128_si32(s);
}

// Rounds 32 floats times `scale` to int8 in order; returns the sum of the quants.
inline int quantize32(const __m256 v[4], __m256 scale, int8_t* dst) {
  __m256i q[4];
  for (int k = 0; k < 4; ++k)
    q[k] = _mm256_cvtps_epi32(_mm256_round_ps(_mm256_mul_ps(v[k], scale), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
  const int sum = hsum_i32(_mm256_add_epi32(_mm256_add_epi32(q[0], q[1]), _mm256_add_epi32(q[2], q[3])));
  // packs interleave 128-bit lanes; the final permute restores element order.
  const __m256i p01 = _mm256_packs_epi32(q[0], q[1]), p23 = _mm256_packs_epi32(q[2], q[3]);
  const __m256i p = _mm256_packs_epi16(p01, p23);
  const __m256i ordered = _mm256_permutevar8x32_epi32(p, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst), ordered);
  return sum;
}

void act_q8_0(const float* x, uint8_t* dst, int64_t n) {
  const int64_t nb = n / qk8_0;
  auto* d = reinterpret_cast<float*>(dst);
  float* sums = d + nb;
  auto* q = reinterpret_cast<int8_t*>(dst + nb * 2 * sizeof(float));
  auto* isums = reinterpret_cast<int32_t*>(dst + nb * (2 * sizeof(float) + qk8_0));
  const __m256 sign = _mm256_set1_ps(-0.0f);
  for (int64_t b = 0; b < nb; ++b) {
    __m256 v[4];
    __m256 amax = _mm256_setzero_ps();
    for (int k = 0; k < 4; ++k) {
      v[k] = _mm256_loadu_ps(x + b * qk8_0 + 8 * k);
      amax = _mm256_max_ps(amax, _mm256_andnot_ps(sign, v[k]));
    }
    const float dd = hmax(amax) / 127.0f;
    const float id = dd != 0.0f ? 1.0f / dd : 0.0f;
    const int s = quantize32(v, _mm256_set1_ps(id), q + b * qk8_0);
    d[b] = _cvtsh_ss(_cvtss_sh(dd, _MM_FROUND_TO_NEAREST_INT));
    sums[b] = d[b] * static_cast<float>(s);
    isums[b] = s;
  }
}

void act_q8_k(const float* x, uint8_t* dst, int64_t n) {
  auto* y = reinterpret_cast<block_q8_k*>(dst);
  for (int64_t b = 0; b < n / qk_k; ++b, x += qk_k) {
    __m256 vmax = _mm256_set1_ps(-INFINITY), vmin = _mm256_set1_ps(INFINITY);
    for (int k = 0; k < qk_k; k += 8) {
      const __m256 v = _mm256_loadu_ps(x + k);
      vmax = _mm256_max_ps(vmax, v);
      vmin = _mm256_min_ps(vmin, v);
    }
    const float mx = hmax(vmax), mn = hmin(vmin);
    const float max = mx >= -mn ? mx : mn;  // the value of largest magnitude
    if (max == 0.0f) {
      std::memset(&y[b], 0, sizeof(block_q8_k));
      continue;
    }
    const float iscale = -127.0f / max;
    const __m256 vs = _mm256_set1_ps(iscale);
    for (int k = 0; k < qk_k; k += 32) {
      __m256 v[4];
      for (int j = 0; j < 4; ++j) v[j] = _mm256_loadu_ps(x + k + 8 * j);
      quantize32(v, vs, y[b].qs + k);  // |iscale * x| <= 127: no clamping needed
    }
    for (int j = 0; j < qk_k / 16; ++j) {
      const __m256i w = _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(y[b].qs + 16 * j)));
      y[b].bsums[j] = static_cast<int16_t>(hsum_i32(_mm256_madd_epi16(w, _mm256_set1_epi16(1))));
    }
    y[b].d = 1.0f / iscale;
  }
}

}  // namespace

void fill_avx2_act_quant(kernel_table& t) {
  t.quantize_act_q8_0 = act_q8_0;
  t.quantize_act_q8_k = act_q8_k;
}

}  // namespace qf::infer::cpu::detail
