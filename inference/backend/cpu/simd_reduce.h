// Horizontal reductions of one 256-bit register, shared by the AVX2 and
// AVX-512 kernel files (and the host attention kernel). Include it only from
// files compiled with AVX2/F16C. Internal linkage on purpose: each kernel file
// is compiled with its own ISA flags, and a shared out-of-line copy built with
// AVX-512 could be linked into the AVX2 path.
#pragma once

#include <immintrin.h>

namespace qf::infer::cpu::simd {
namespace {

inline float hsum(__m256 v) {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}

inline float hmax(__m256 v) {
  __m128 m = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  m = _mm_max_ps(m, _mm_movehl_ps(m, m));
  m = _mm_max_ss(m, _mm_movehdup_ps(m));
  return _mm_cvtss_f32(m);
}

inline float hmin(__m256 v) {
  __m128 m = _mm_min_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  m = _mm_min_ps(m, _mm_movehl_ps(m, m));
  m = _mm_min_ss(m, _mm_movehdup_ps(m));
  return _mm_cvtss_f32(m);
}

}  // namespace
}  // namespace qf::infer::cpu::simd
