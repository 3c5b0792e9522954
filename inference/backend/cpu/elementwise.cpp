// Elementwise and vector ops of ops.h. The reductions and conversions that
// dominate (dot products over the F16 KV cache, axpy over V rows, norms)
// go through the active kernel table; exp-based ops stay scalar libm code.
#include <algorithm>
#include <cmath>

#include "inference/backend/cpu/kernels.h"
#include "inference/backend/cpu/ops.h"

namespace qf::infer::cpu {

void rms_norm(const float* x, const float* weight, float* y, int64_t n, float eps) {
  const auto& k = detail::active_kernels();
  const float mean = k.sum_squares(x, n) / static_cast<float>(n);
  const float scale = 1.0f / std::sqrt(mean + eps);
  k.scale_mul(x, weight, scale, y, n);
}

void softmax(float* x, int64_t n) {
  if (n <= 0) return;
  const float max = *std::max_element(x, x + n);
  double sum = 0;
  for (int64_t i = 0; i < n; ++i) {
    x[i] = std::exp(x[i] - max);
    sum += x[i];
  }
  const float inv = static_cast<float>(1.0 / sum);
  for (int64_t i = 0; i < n; ++i) x[i] *= inv;
}

void silu_mul(const float* gate, const float* up, float* out, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    const float g = gate[i];
    out[i] = g / (1.0f + std::exp(-g)) * up[i];
  }
}

void add(const float* a, const float* b, float* out, int64_t n) { detail::active_kernels().add(a, b, out, n); }
float dot_f32(const float* a, const float* b, int64_t n) { return detail::active_kernels().vec_dot_f32(a, b, n); }
float dot_f16_f32(const fp16_t* a, const float* b, int64_t n) {
  return detail::active_kernels().vec_dot_f16_f32(a, b, n);
}
void axpy_f16(float alpha, const fp16_t* x, float* y, int64_t n) { detail::active_kernels().axpy_f16(alpha, x, y, n); }
void f32_to_f16_row(const float* src, fp16_t* dst, int64_t n) { detail::active_kernels().f32_to_f16(src, dst, n); }
void f16_to_f32_row(const fp16_t* src, float* dst, int64_t n) { detail::active_kernels().f16_to_f32(src, dst, n); }

}  // namespace qf::infer::cpu
