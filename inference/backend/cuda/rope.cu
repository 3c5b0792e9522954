// Rotary position embeddings, both pairings: llama's adjacent pairs
// (2i, 2i+1) and NEOX/qwen2's halves (i, i + n_rot/2), with theta_i = p *
// scale / base^(2i/n_rot) (divided by Llama 3.1's per-pair frequency factors
// when given) computed as the CPU backend does. rope_shift
// re-rotates cached keys (F16 or F32) by a position delta (rotations compose: R(p +
// delta) = R(delta) R(p)), for KV chunk reuse. YaRN (ext_factor != 0) mixes
// the interpolated and extrapolated angles by the ramp of
// inference/backend/rope.h and scales cos/sin by mscale (not in a shift).
#include <cmath>
#include <stdexcept>

#include "inference/backend/cuda/common.cuh"

namespace qf::infer::cuda {
namespace {

__device__ __forceinline__ void rotate_pair(float& x0, float& x1, float theta, float mscale = 1.0f) {
  float s, c;
  sincosf(theta, &s, &c);
  if (mscale != 1.0f) s *= mscale, c *= mscale;
  const float a = x0, b = x1;
  x0 = a * c - b * s;
  x1 = a * s + b * c;
}

__device__ __forceinline__ int64_t pair_first(int i, int64_t n_rot, bool neox) { return neox ? i : 2 * i; }
__device__ __forceinline__ int64_t pair_second(int i, int64_t n_rot, bool neox) {
  return neox ? i + n_rot / 2 : 2 * i + 1;
}
// In the CPU's order (inference/backend/rope.cpp): freq = 1 / base^(2i/n_rot),
// theta = pos * freq * scale, then / factor. powf and sincosf may differ from
// the host's by an ulp or two, so the angles agree to rounding, not bit for bit.
__device__ __forceinline__ float theta_of(float p, int i, int64_t n_rot, float base, float scale,
                                          const float* factors) {
  const float freq = 1.0f / powf(base, float(2 * i) / float(n_rot));
  const float t = __fmul_rn(__fmul_rn(p, freq), scale);
  return factors ? t / factors[i] : t;
}

// YaRN's angle for pair i (rope.h): extrap = p * freq (/ factor), interp =
// scale * extrap, mixed by the ramp over [corr_low, corr_high].
struct yarn_t {
  float ext_factor, mscale, corr_low, corr_high;
};
__device__ __forceinline__ float yarn_theta(float p, int i, int64_t n_rot, float base, float scale,
                                            const float* factors, const yarn_t& y) {
  const float freq = 1.0f / powf(base, float(2 * i) / float(n_rot));
  float extrap = __fmul_rn(p, freq);
  if (factors) extrap = extrap / factors[i];
  const float interp = __fmul_rn(scale, extrap);
  const float span = fmaxf(0.001f, y.corr_high - y.corr_low);
  const float ramp = 1.0f - fminf(1.0f, fmaxf(0.0f, (float(i) - y.corr_low) / span));
  const float mix = ramp * y.ext_factor;
  return interp * (1 - mix) + extrap * mix;
}
__device__ __forceinline__ float angle(float p, int i, int64_t n_rot, float base, float scale, const float* factors,
                                       const yarn_t& y) {
  return y.ext_factor != 0 ? yarn_theta(p, i, n_rot, base, scale, factors, y)
                           : theta_of(p, i, n_rot, base, scale, factors);
}

void check_rot(int64_t n_rot, int64_t head_dim) {
  if (n_rot > head_dim || n_rot / 2 > 1024 || n_rot % 2 != 0)
    throw std::invalid_argument("cuda rope: n_rot must be even, <= head_dim and <= 2048");
}

// grid (token, head), threads: pairs.
__global__ void rope_kernel(float* x, int64_t n_heads, int64_t head_dim, int64_t n_rot, const int32_t* pos,
                            float base, float scale, const float* factors, bool neox, yarn_t y) {
  const int i = threadIdx.x;
  if (i >= n_rot / 2) return;
  float* v = x + (int64_t(blockIdx.x) * n_heads + blockIdx.y) * head_dim;
  const int64_t a = pair_first(i, n_rot, neox), b = pair_second(i, n_rot, neox);
  float x0 = v[a], x1 = v[b];
  rotate_pair(x0, x1, angle(float(pos[blockIdx.x]), i, n_rot, base, scale, factors, y), y.mscale);
  v[a] = x0;
  v[b] = x1;
}

__device__ __forceinline__ float load(const uint16_t* p) { return h2f(*p); }
__device__ __forceinline__ float load(const float* p) { return *p; }
__device__ __forceinline__ void store(uint16_t* p, float x) { *p = f2h(x); }
__device__ __forceinline__ void store(float* p, float x) { *p = x; }

template <typename KV>
__global__ void rope_shift_kernel(KV* k, int64_t n_heads, int64_t head_dim, int64_t n_rot, int32_t delta,
                                  float base, float scale, const float* factors, bool neox, yarn_t y) {
  const int i = threadIdx.x;
  if (i >= n_rot / 2) return;
  KV* v = k + (int64_t(blockIdx.x) * n_heads + blockIdx.y) * head_dim;
  const int64_t a = pair_first(i, n_rot, neox), b = pair_second(i, n_rot, neox);
  float x0 = load(v + a), x1 = load(v + b);
  rotate_pair(x0, x1, angle(float(delta), i, n_rot, base, scale, factors, y));  // a pure rotation
  store(v + a, x0);
  store(v + b, x1);
}

}  // namespace

void rope(float* x, int64_t n_tokens, int64_t n_heads, int64_t head_dim, int64_t n_rot, const int32_t* pos,
          float freq_base, float freq_scale, const float* factors, bool neox, stream_t stream, float ext_factor,
          float attn_factor, float corr_low, float corr_high) {
  check_rot(n_rot, head_dim);
  if (n_tokens == 0 || n_rot < 2) return;
  const dim3 grid{unsigned(n_tokens), unsigned(n_heads)};
  const float mscale = ext_factor != 0 ? attn_factor * (1.0f + 0.1f * std::log(1.0f / freq_scale)) : attn_factor;
  const yarn_t y{ext_factor, mscale, corr_low, corr_high};
  rope_kernel<<<grid, unsigned(n_rot / 2), 0, stream>>>(x, n_heads, head_dim, n_rot, pos, freq_base, freq_scale,
                                                         factors, neox, y);
  QF_CUDA_CHECK(cudaGetLastError());
}

void rope_shift(void* k, ggml_type kv_type, int64_t n_rows, int64_t n_heads, int64_t head_dim, int64_t n_rot,
                int32_t delta, float freq_base, float freq_scale, const float* factors, bool neox, stream_t stream,
                float ext_factor, float corr_low, float corr_high) {
  check_rot(n_rot, head_dim);
  if (n_rows == 0 || n_rot < 2) return;
  const dim3 grid{unsigned(n_rows), unsigned(n_heads)};
  const yarn_t y{ext_factor, 1.0f, corr_low, corr_high};
  if (kv_type == ggml_type::f16)
    rope_shift_kernel<<<grid, unsigned(n_rot / 2), 0, stream>>>(static_cast<uint16_t*>(k), n_heads, head_dim, n_rot,
                                                                 delta, freq_base, freq_scale, factors, neox, y);
  else
    rope_shift_kernel<<<grid, unsigned(n_rot / 2), 0, stream>>>(static_cast<float*>(k), n_heads, head_dim, n_rot,
                                                                 delta, freq_base, freq_scale, factors, neox, y);
  QF_CUDA_CHECK(cudaGetLastError());
}

}  // namespace qf::infer::cuda
