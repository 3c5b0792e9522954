// AVX2/FMA/F16C kernels for float weights (f32, f16, bf16) and the vector ops
// of ops.h (dot products, the F16 KV-cache conversions, axpy, norms). F16C's
// conversions round to nearest even, matching the scalar reference exactly.
#include <immintrin.h>

#include <cmath>
#include <limits>

#include "inference/backend/cpu/float_weight_types.h"
#include "inference/backend/cpu/kernels.h"
#include "inference/backend/cpu/simd_reduce.h"

namespace qf::infer::cpu::detail {
namespace {

using simd::hsum;

// Loads 8 weights of type W as floats.
template <class W>
inline __m256 load8(const W* p);
template <>
inline __m256 load8<float>(const float* p) { return _mm256_loadu_ps(p); }
template <>
inline __m256 load8<fp16_t>(const fp16_t* p) {
  return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
}
template <>
inline __m256 load8<bf16_tag>(const bf16_tag* p) {
  const __m256i u = _mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
  return _mm256_castsi256_ps(_mm256_slli_epi32(u, 16));
}

template <class W, int NT>
void dot_float(int64_t n, const void* wp, const uint8_t* acts, size_t stride, float* out) {
  const W* w = static_cast<const W*>(wp);
  const float* x[NT];
  __m256 acc0[NT], acc1[NT];
  for (int t = 0; t < NT; ++t) {
    x[t] = reinterpret_cast<const float*>(acts + t * stride);
    acc0[t] = acc1[t] = _mm256_setzero_ps();
  }
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m256 w0 = load8(w + i), w1 = load8(w + i + 8);
    for (int t = 0; t < NT; ++t) {
      acc0[t] = _mm256_fmadd_ps(w0, _mm256_loadu_ps(x[t] + i), acc0[t]);
      acc1[t] = _mm256_fmadd_ps(w1, _mm256_loadu_ps(x[t] + i + 8), acc1[t]);
    }
  }
  for (; i + 8 <= n; i += 8) {
    const __m256 w0 = load8(w + i);
    for (int t = 0; t < NT; ++t) acc0[t] = _mm256_fmadd_ps(w0, _mm256_loadu_ps(x[t] + i), acc0[t]);
  }
  for (int t = 0; t < NT; ++t) {
    float s = hsum(_mm256_add_ps(acc0[t], acc1[t]));
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

float vec_dot_f32(const float* a, const float* b, int64_t n) {
  float out;
  dot_float<float, 1>(n, a, reinterpret_cast<const uint8_t*>(b), 0, &out);
  return out;
}
float vec_dot_f16_f32(const fp16_t* a, const float* b, int64_t n) {
  float out;
  dot_float<fp16_t, 1>(n, a, reinterpret_cast<const uint8_t*>(b), 0, &out);
  return out;
}

void axpy_f16(float alpha, const fp16_t* x, float* y, int64_t n) {
  const __m256 a = _mm256_set1_ps(alpha);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) _mm256_storeu_ps(y + i, _mm256_fmadd_ps(a, load8(x + i), _mm256_loadu_ps(y + i)));
  for (; i < n; ++i) y[i] += alpha * _cvtsh_ss(x[i]);
}

void f32_to_f16(const float* s, fp16_t* d, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    _mm_storeu_si128(reinterpret_cast<__m128i*>(d + i), _mm256_cvtps_ph(_mm256_loadu_ps(s + i), _MM_FROUND_TO_NEAREST_INT));
  for (; i < n; ++i) d[i] = _cvtss_sh(s[i], _MM_FROUND_TO_NEAREST_INT);
}

void f16_to_f32(const fp16_t* s, float* d, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) _mm256_storeu_ps(d + i, load8(s + i));
  for (; i < n; ++i) d[i] = _cvtsh_ss(s[i]);
}

float sum_squares(const float* x, int64_t n) {
  float out;
  dot_float<float, 1>(n, x, reinterpret_cast<const uint8_t*>(x), 0, &out);
  return out;
}

void add(const float* a, const float* b, float* out, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) _mm256_storeu_ps(out + i, _mm256_add_ps(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i)));
  for (; i < n; ++i) out[i] = a[i] + b[i];
}

void scale_mul(const float* x, const float* w, float s, float* y, int64_t n) {
  const __m256 vs = _mm256_set1_ps(s);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    _mm256_storeu_ps(y + i, _mm256_mul_ps(_mm256_mul_ps(_mm256_loadu_ps(x + i), vs), _mm256_loadu_ps(w + i)));
  for (; i < n; ++i) y[i] = x[i] * s * w[i];
}

// exp(x) for 8 floats: x = n ln2 + r with |r| <= ln2/2, a degree-6 polynomial
// for e^r (the Cephes expf coefficients, about 1 ulp), 2^n built in the
// exponent bits. Inputs above 88.7 are clamped; below -87.3 the result is 0,
// so masked (-inf) attention scores get exactly zero weight.
inline __m256 exp8(__m256 x) {
  const __m256 underflow = _mm256_cmp_ps(x, _mm256_set1_ps(-87.33654f), _CMP_LT_OQ);  // -> exactly 0 (masked scores)
  x = _mm256_min_ps(_mm256_max_ps(x, _mm256_set1_ps(-87.33654f)), _mm256_set1_ps(88.72283f));
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
  const __m256 e = _mm256_add_ps(_mm256_fmadd_ps(_mm256_mul_ps(p, r), r, r), _mm256_set1_ps(1.0f));
  const __m256i k = _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127)), 23);
  return _mm256_andnot_ps(underflow, _mm256_mul_ps(e, _mm256_castsi256_ps(k)));
}

void silu_mul(const float* gate, const float* up, float* out, int64_t n) {
  const __m256 one = _mm256_set1_ps(1.0f), sign = _mm256_set1_ps(-0.0f);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256 g = _mm256_loadu_ps(gate + i);
    const __m256 s = _mm256_div_ps(g, _mm256_add_ps(one, exp8(_mm256_xor_ps(g, sign))));
    _mm256_storeu_ps(out + i, _mm256_mul_ps(s, _mm256_loadu_ps(up + i)));
  }
  for (; i < n; ++i) out[i] = gate[i] / (1.0f + std::exp(-gate[i])) * up[i];
}

// gelu(x) = 0.5 x (1 + tanh(z)) = x / (1 + exp(-2z)), z = sqrt(2/pi) (x +
// 0.044715 x^3): the sigmoid form has no cancellation near 0 and saturates to
// x and to 0 at exp8's clamps.
inline __m256 gelu8(__m256 x) {
  const __m256 one = _mm256_set1_ps(1.0f);
  const __m256 x2 = _mm256_mul_ps(x, x);
  const __m256 z2 = _mm256_mul_ps(_mm256_mul_ps(_mm256_set1_ps(-2.0f * 0.79788456080286535588f), x),
                                  _mm256_fmadd_ps(_mm256_set1_ps(0.044715f), x2, one));
  return _mm256_div_ps(x, _mm256_add_ps(one, exp8(z2)));
}

void gelu_mul(const float* x, const float* up, float* out, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256 g = gelu8(_mm256_loadu_ps(x + i));
    _mm256_storeu_ps(out + i, up ? _mm256_mul_ps(g, _mm256_loadu_ps(up + i)) : g);
  }
  for (; i < n; ++i) out[i] = up ? gelu_tanh(x[i]) * up[i] : gelu_tanh(x[i]);
}

void scale(float* x, float s, int64_t n) {
  const __m256 vs = _mm256_set1_ps(s);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) _mm256_storeu_ps(x + i, _mm256_mul_ps(_mm256_loadu_ps(x + i), vs));
  for (; i < n; ++i) x[i] *= s;
}

template <bool Store>
float exp_sub_sum_as(const float* x, float max, int64_t n, float* out) {
  const __m256 vmax = _mm256_set1_ps(max);
  __m256 acc = _mm256_setzero_ps();
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256 e = exp8(_mm256_sub_ps(_mm256_loadu_ps(x + i), vmax));
    if constexpr (Store) _mm256_storeu_ps(out + i, e);
    acc = _mm256_add_ps(acc, e);
  }
  float sum = hsum(acc);
  for (; i < n; ++i) {
    const float e = std::exp(x[i] - max);
    if constexpr (Store) out[i] = e;
    sum += e;
  }
  return sum;
}

// The log-probability of a pick only sums (out null): no copy of the row to
// write the exps into (exp_sum_chunk copied each chunk to the stack before).
float exp_sub_sum(const float* x, float max, int64_t n, float* out) {
  return out ? exp_sub_sum_as<true>(x, max, n, out) : exp_sub_sum_as<false>(x, max, n, nullptr);
}

// Four running maxima of eight lanes: a long row (the vocabulary's logits)
// is not one chain of dependent compares. maxps(x, m) keeps m where x is NaN.
float max_f32(const float* x, int64_t n) {
  const __m256 ninf = _mm256_set1_ps(-std::numeric_limits<float>::infinity());
  __m256 m[4] = {ninf, ninf, ninf, ninf};
  int64_t i = 0;
  for (; i + 32 <= n; i += 32)
    for (int k = 0; k < 4; ++k) m[k] = _mm256_max_ps(_mm256_loadu_ps(x + i + 8 * k), m[k]);
  for (; i + 8 <= n; i += 8) m[0] = _mm256_max_ps(_mm256_loadu_ps(x + i), m[0]);
  float r = simd::hmax(_mm256_max_ps(_mm256_max_ps(m[0], m[1]), _mm256_max_ps(m[2], m[3])));
  for (; i < n; ++i) r = x[i] > r ? x[i] : r;
  return r;
}

}  // namespace

void fill_avx2_float_kernels(kernel_table& t) {
  t.silu_mul = silu_mul;
  t.gelu_mul = gelu_mul;
  t.scale = scale;
  t.exp_sub_sum = exp_sub_sum;
  t.max_f32 = max_f32;
  t.dot_f32 = row_f32;
  t.dot_f16 = row_f16;
  t.dot_bf16 = row_bf16;
  t.vec_dot_f32 = vec_dot_f32;
  t.vec_dot_f16_f32 = vec_dot_f16_f32;
  t.axpy_f16 = axpy_f16;
  t.f32_to_f16 = f32_to_f16;
  t.f16_to_f32 = f16_to_f32;
  t.sum_squares = sum_squares;
  t.add = add;
  t.scale_mul = scale_mul;
}

}  // namespace qf::infer::cpu::detail
