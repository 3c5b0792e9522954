// Rotary position embeddings, both pairings: llama's adjacent pairs
// (2i, 2i+1) and NEOX/qwen2's halves (i, i + n_rot/2), with theta_i = p *
// scale / base^(2i/n_rot) (divided by Llama 3.1's per-pair frequency factors
// when given) computed as the CPU backend does. rope_shift
// re-rotates cached keys (F16 or F32) by a position delta (rotations compose: R(p +
// delta) = R(delta) R(p)), for KV chunk reuse.
#include <stdexcept>

#include "inference/backend/cuda/common.cuh"

namespace qf::infer::cuda {
namespace {

__device__ __forceinline__ void rotate_pair(float& x0, float& x1, float theta) {
  float s, c;
  sincosf(theta, &s, &c);
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

void check_rot(int64_t n_rot, int64_t head_dim) {
  if (n_rot > head_dim || n_rot / 2 > 1024 || n_rot % 2 != 0)
    throw std::invalid_argument("cuda rope: n_rot must be even, <= head_dim and <= 2048");
}

// grid (token, head), threads: pairs.
__global__ void rope_kernel(float* x, int64_t n_heads, int64_t head_dim, int64_t n_rot, const int32_t* pos,
                            float base, float scale, const float* factors, bool neox) {
  const int i = threadIdx.x;
  if (i >= n_rot / 2) return;
  float* v = x + (int64_t(blockIdx.x) * n_heads + blockIdx.y) * head_dim;
  const int64_t a = pair_first(i, n_rot, neox), b = pair_second(i, n_rot, neox);
  float x0 = v[a], x1 = v[b];
  rotate_pair(x0, x1, theta_of(float(pos[blockIdx.x]), i, n_rot, base, scale, factors));
  v[a] = x0;
  v[b] = x1;
}

__device__ __forceinline__ float load(const uint16_t* p) { return h2f(*p); }
__device__ __forceinline__ float load(const float* p) { return *p; }
__device__ __forceinline__ void store(uint16_t* p, float x) { *p = f2h(x); }
__device__ __forceinline__ void store(float* p, float x) { *p = x; }

template <typename KV>
__global__ void rope_shift_kernel(KV* k, int64_t n_heads, int64_t head_dim, int64_t n_rot, int32_t delta,
                                  float base, float scale, const float* factors, bool neox) {
  const int i = threadIdx.x;
  if (i >= n_rot / 2) return;
  KV* v = k + (int64_t(blockIdx.x) * n_heads + blockIdx.y) * head_dim;
  const int64_t a = pair_first(i, n_rot, neox), b = pair_second(i, n_rot, neox);
  float x0 = load(v + a), x1 = load(v + b);
  rotate_pair(x0, x1, theta_of(float(delta), i, n_rot, base, scale, factors));
  store(v + a, x0);
  store(v + b, x1);
}

}  // namespace

void rope(float* x, int64_t n_tokens, int64_t n_heads, int64_t head_dim, int64_t n_rot, const int32_t* pos,
          float freq_base, float freq_scale, const float* factors, bool neox, stream_t stream) {
  check_rot(n_rot, head_dim);
  if (n_tokens == 0 || n_rot < 2) return;
  const dim3 grid{unsigned(n_tokens), unsigned(n_heads)};
  rope_kernel<<<grid, unsigned(n_rot / 2), 0, stream>>>(x, n_heads, head_dim, n_rot, pos, freq_base, freq_scale,
                                                         factors, neox);
  QF_CUDA_CHECK(cudaGetLastError());
}

void rope_shift(void* k, ggml_type kv_type, int64_t n_rows, int64_t n_heads, int64_t head_dim, int64_t n_rot,
                int32_t delta, float freq_base, float freq_scale, const float* factors, bool neox, stream_t stream) {
  check_rot(n_rot, head_dim);
  if (n_rows == 0 || n_rot < 2) return;
  const dim3 grid{unsigned(n_rows), unsigned(n_heads)};
  if (kv_type == ggml_type::f16)
    rope_shift_kernel<<<grid, unsigned(n_rot / 2), 0, stream>>>(static_cast<uint16_t*>(k), n_heads, head_dim, n_rot,
                                                                 delta, freq_base, freq_scale, factors, neox);
  else
    rope_shift_kernel<<<grid, unsigned(n_rot / 2), 0, stream>>>(static_cast<float*>(k), n_heads, head_dim, n_rot,
                                                                 delta, freq_base, freq_scale, factors, neox);
  QF_CUDA_CHECK(cudaGetLastError());
}

}  // namespace qf::infer::cuda
