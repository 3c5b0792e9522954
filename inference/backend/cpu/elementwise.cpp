// Elementwise and vector ops of ops.h, dispatched through the active kernel
// table (dot products over the F16 KV cache, axpy over V rows, norms, and the
// exp-based softmax and SiLU, which have a vectorized exp at the SIMD levels).
#include <algorithm>
#include <cmath>
#include <limits>

#include "inference/backend/cpu/kernels.h"
#include "inference/backend/cpu/ops.h"

namespace qf::infer::cpu {

void rms_norm(const float* x, const float* weight, float* y, int64_t n, float eps) {
  const auto& k = detail::active_kernels();
  const float mean = k.sum_squares(x, n) / static_cast<float>(n);
  const float scale = 1.0f / std::sqrt(mean + eps);
  k.scale_mul(x, weight, scale, y, n);
}

float max_value(const float* x, int64_t n) { return detail::active_kernels().max_f32(x, n); }

void softmax(float* x, int64_t n) {
  if (n <= 0) return;
  const float max = max_value(x, n);
  const float sum = detail::active_kernels().exp_sub_sum(x, max, n, x);
  const float inv = 1.0f / sum;
  for (int64_t i = 0; i < n; ++i) x[i] *= inv;
}

float exp_sum_chunk(const float* x, float max, int64_t m) {
  return detail::active_kernels().exp_sub_sum(x, max, m, nullptr);
}

float top_logprob(const float* x, int64_t n) {
  if (n <= 0) return std::numeric_limits<float>::quiet_NaN();
  const float max = max_value(x, n);
  if (max == -std::numeric_limits<float>::infinity()) return -std::log(static_cast<float>(n));
  double sum = 0;
  for (int64_t c = 0; c < n; c += k_logprob_chunk) sum += exp_sum_chunk(x + c, max, std::min(k_logprob_chunk, n - c));
  return static_cast<float>(-std::log(sum));
}

void silu_mul(const float* gate, const float* up, float* out, int64_t n) {
  detail::active_kernels().silu_mul(gate, up, out, n);
}

void gelu_mul(const float* x, const float* up, float* out, int64_t n) {
  detail::active_kernels().gelu_mul(x, up, out, n);
}

void layer_norm(const float* x, const float* weight, const float* bias, float* y, int64_t n, float eps) {
  // Two passes in double (mean, then the centred sum of squares), as ggml_norm
  // centres before squaring; a row is n_embd long, so this is not a hot loop.
  double sum = 0;
  for (int64_t i = 0; i < n; ++i) sum += x[i];
  const double mean = sum / static_cast<double>(n);
  double ss = 0;
  for (int64_t i = 0; i < n; ++i) ss += (x[i] - mean) * (x[i] - mean);
  const float inv = static_cast<float>(1.0 / std::sqrt(ss / static_cast<double>(n) + eps));
  const float m = static_cast<float>(mean);
  if (bias)
    for (int64_t i = 0; i < n; ++i) y[i] = (x[i] - m) * inv * weight[i] + bias[i];
  else
    for (int64_t i = 0; i < n; ++i) y[i] = (x[i] - m) * inv * weight[i];
}

void scale(float* x, float s, int64_t n) { detail::active_kernels().scale(x, s, n); }

void add(const float* a, const float* b, float* out, int64_t n) { detail::active_kernels().add(a, b, out, n); }
float dot_f32(const float* a, const float* b, int64_t n) { return detail::active_kernels().vec_dot_f32(a, b, n); }
float dot_f16_f32(const fp16_t* a, const float* b, int64_t n) {
  return detail::active_kernels().vec_dot_f16_f32(a, b, n);
}
void axpy_f16(float alpha, const fp16_t* x, float* y, int64_t n) { detail::active_kernels().axpy_f16(alpha, x, y, n); }
void f32_to_f16_row(const float* src, fp16_t* dst, int64_t n) { detail::active_kernels().f32_to_f16(src, dst, n); }
void f16_to_f32_row(const fp16_t* src, float* dst, int64_t n) { detail::active_kernels().f16_to_f32(src, dst, n); }

}  // namespace qf::infer::cpu
