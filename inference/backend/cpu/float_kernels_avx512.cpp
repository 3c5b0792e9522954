// AVX-512 kernels for float weights (f32, f16, bf16) and the F16 KV-cache
// dot product: 16 values per step, two accumulators per token.
// The first include of <immintrin.h> (the header says why).
#include "inference/backend/cpu/immintrin_avx512.h"

#include "inference/backend/cpu/float_weight_types.h"
#include "inference/backend/cpu/kernels.h"

namespace qf::infer::cpu::detail {
namespace {

template <class W>
inline __m512 load16(const W* p);
template <>
inline __m512 load16<float>(const float* p) { return _mm512_loadu_ps(p); }
template <>
inline __m512 load16<fp16_t>(const fp16_t* p) {
  return _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
}
template <>
inline __m512 load16<bf16_tag>(const bf16_tag* p) {
  const __m512i u = _mm512_cvtepu16_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
  return _mm512_castsi512_ps(_mm512_slli_epi32(u, 16));
}

template <class W, int NT>
void dot_float(int64_t n, const void* wp, const uint8_t* acts, size_t stride, float* out) {
  const W* w = static_cast<const W*>(wp);
  const float* x[NT];
  __m512 acc0[NT], acc1[NT];
  for (int t = 0; t < NT; ++t) {
    x[t] = reinterpret_cast<const float*>(acts + t * stride);
    acc0[t] = acc1[t] = _mm512_setzero_ps();
  }
  int64_t i = 0;
  for (; i + 32 <= n; i += 32) {
    const __m512 w0 = load16(w + i), w1 = load16(w + i + 16);
    for (int t = 0; t < NT; ++t) {
      acc0[t] = _mm512_fmadd_ps(w0, _mm512_loadu_ps(x[t] + i), acc0[t]);
      acc1[t] = _mm512_fmadd_ps(w1, _mm512_loadu_ps(x[t] + i + 16), acc1[t]);
    }
  }
  for (; i + 16 <= n; i += 16) {
    const __m512 w0 = load16(w + i);
    for (int t = 0; t < NT; ++t) acc0[t] = _mm512_fmadd_ps(w0, _mm512_loadu_ps(x[t] + i), acc0[t]);
  }
  for (int t = 0; t < NT; ++t) {
    float s = _mm512_reduce_add_ps(_mm512_add_ps(acc0[t], acc1[t]));
    for (int64_t j = i; j < n; ++j) s += to_f32(w[j]) * x[t][j];
    out[t] = s;
  }
}
template <int NT>
void dot_f32_t(int64_t n, const void* w, const uint8_t* a, size_t s, float* o) { dot_float<float, NT>(n, w, a, s, o); }
template <int NT>
void dot_f16_t(int64_t n, const void* w, const uint8_t* a, size_t s, float* o) { dot_float<fp16_t, NT>(n, w, a, s, o); }
template <int NT>
void dot_bf16_t(int64_t n, const void* w, const uint8_t* a, size_t s, float* o) { dot_float<bf16_tag, NT>(n, w, a, s, o); }
QF_ROW_DOT_TILES(row_f32, dot_f32_t)
QF_ROW_DOT_TILES(row_f16, dot_f16_t)
QF_ROW_DOT_TILES(row_bf16, dot_bf16_t)

float vec_dot_f16_f32(const fp16_t* a, const float* b, int64_t n) {
  float out;
  dot_float<fp16_t, 1>(n, a, reinterpret_cast<const uint8_t*>(b), 0, &out);
  return out;
}

}  // namespace

void fill_avx512_float_kernels(kernel_table& t) {
  t.dot_f32 = row_f32;
  t.dot_f16 = row_f16;
  t.dot_bf16 = row_bf16;
  t.vec_dot_f16_f32 = vec_dot_f16_f32;
}

}  // namespace qf::infer::cpu::detail
