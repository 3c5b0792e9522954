// Elementwise and reduction kernels: SwiGLU, GELU / GeGLU, scale, add, bias,
// row softmax, argmax, the top element's log-probability.
#include <math_constants.h>

#include "inference/backend/cuda/common.cuh"

namespace qf::infer::cuda {
namespace {

__global__ void silu_mul_kernel(const float* g, const float* u, float* o, int64_t n) {
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) {
    const float x = g[i];
    o[i] = x / (1.0f + __expf(-x)) * u[i];
  }
}

// gelu(x) = 0.5 x (1 + tanh(z)) = x / (1 + exp(-2z)), z = sqrt(2/pi) (x + 0.044715 x^3).
__global__ void gelu_mul_kernel(const float* x, const float* u, float* o, int64_t n) {
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) {
    const float v = x[i];
    const float z = 0.79788456080286535588f * v * (1.0f + 0.044715f * v * v);
    const float g = v / (1.0f + __expf(-2.0f * z));
    o[i] = u ? g * u[i] : g;
  }
}

__global__ void scale_kernel(float* x, float s, int64_t n) {
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) x[i] *= s;
}

__global__ void add_kernel(const float* a, const float* b, float* o, int64_t n) {
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) o[i] = a[i] + b[i];
}

__global__ void add_bias_kernel(float* x, const float* bias, int64_t n, int64_t dim) {
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) x[i] += bias[i % dim];
}

// One block per row.
__global__ void softmax_kernel(float* x, int64_t n) {
  float* r = x + int64_t(blockIdx.x) * n;
  __shared__ float red[32];
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, nw = blockDim.x / 32;
  float m = -CUDART_INF_F;
  for (int64_t i = threadIdx.x; i < n; i += blockDim.x) m = fmaxf(m, r[i]);
  m = warp_max(m);
  if (lane == 0) red[warp] = m;
  __syncthreads();
  m = red[0];
  for (int w = 1; w < nw; ++w) m = fmaxf(m, red[w]);
  __syncthreads();
  if (m == -CUDART_INF_F) {  // nothing to normalise: a row of zeros, not NaN
    for (int64_t i = threadIdx.x; i < n; i += blockDim.x) r[i] = 0.f;
    return;
  }
  float s = 0.f;
  for (int64_t i = threadIdx.x; i < n; i += blockDim.x) {
    const float e = __expf(r[i] - m);
    r[i] = e;
    s += e;
  }
  s = warp_sum(s);
  if (lane == 0) red[warp] = s;
  __syncthreads();
  s = 0.f;
  for (int w = 0; w < nw; ++w) s += red[w];
  const float inv = 1.0f / s;
  for (int64_t i = threadIdx.x; i < n; i += blockDim.x) r[i] *= inv;
}

// One block of 1024 threads per row; ties resolve to the lowest index. NaNs
// never win (the CPU's scan differs only when element 0 is NaN).
__global__ void argmax_kernel(const float* xs, int64_t n, int32_t* outs) {
  __shared__ float bv[1024];
  __shared__ int32_t bi[1024];
  const float* x = xs + int64_t(blockIdx.x) * n;
  int32_t* out = outs + blockIdx.x;
  float best = -CUDART_INF_F;
  int32_t idx = 0x7fffffff;
  for (int64_t i = threadIdx.x; i < n; i += blockDim.x) {
    const float v = x[i];
    if (v > best) { best = v; idx = int32_t(i); }
  }
  bv[threadIdx.x] = best;
  bi[threadIdx.x] = idx;
  __syncthreads();
  for (int s = blockDim.x / 2; s > 0; s >>= 1) {
    if (int(threadIdx.x) < s) {
      const float ov = bv[threadIdx.x + s];
      const int32_t oi = bi[threadIdx.x + s];
      if (ov > bv[threadIdx.x] || (ov == bv[threadIdx.x] && oi < bi[threadIdx.x])) {
        bv[threadIdx.x] = ov;
        bi[threadIdx.x] = oi;
      }
    }
    __syncthreads();
  }
  if (threadIdx.x == 0) out[0] = bi[0] == 0x7fffffff ? 0 : bi[0];  // nothing above -inf: 0, as the CPU
}

// One block per row: the row's max, then the sum of exp(x - max); the largest
// element's log-probability is -log of that sum.
__global__ void top_logprob_kernel(const float* xs, int64_t n, float* outs) {
  const float* r = xs + int64_t(blockIdx.x) * n;
  __shared__ float red[32];
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, nw = blockDim.x / 32;
  float m = -CUDART_INF_F;
  for (int64_t i = threadIdx.x; i < n; i += blockDim.x) m = fmaxf(m, r[i]);
  m = warp_max(m);
  if (lane == 0) red[warp] = m;
  __syncthreads();
  m = red[0];
  for (int w = 1; w < nw; ++w) m = fmaxf(m, red[w]);
  __syncthreads();
  if (m == -CUDART_INF_F) {  // nothing above -inf: as a uniform row, like the CPU
    if (threadIdx.x == 0) outs[blockIdx.x] = -logf(float(n > 0 ? n : 1));
    return;
  }
  float s = 0.f;
  for (int64_t i = threadIdx.x; i < n; i += blockDim.x) s += __expf(r[i] - m);
  s = warp_sum(s);
  if (lane == 0) red[warp] = s;
  __syncthreads();
  if (threadIdx.x == 0) {
    float t = 0.f;
    for (int w = 0; w < nw; ++w) t += red[w];
    outs[blockIdx.x] = -logf(t);
  }
}

}  // namespace

void silu_mul(const float* gate, const float* up, float* out, int64_t n, stream_t stream) {
  if (n == 0) return;
  silu_mul_kernel<<<grid_1d(n, 256), 256, 0, stream>>>(gate, up, out, n);
  QF_CUDA_CHECK(cudaGetLastError());
}

void gelu_mul(const float* x, const float* up, float* out, int64_t n, stream_t stream) {
  if (n == 0) return;
  gelu_mul_kernel<<<grid_1d(n, 256), 256, 0, stream>>>(x, up, out, n);
  QF_CUDA_CHECK(cudaGetLastError());
}

void scale(float* x, float s, int64_t n, stream_t stream) {
  if (n == 0) return;
  scale_kernel<<<grid_1d(n, 256), 256, 0, stream>>>(x, s, n);
  QF_CUDA_CHECK(cudaGetLastError());
}

void add(const float* a, const float* b, float* out, int64_t n, stream_t stream) {
  if (n == 0) return;
  add_kernel<<<grid_1d(n, 256), 256, 0, stream>>>(a, b, out, n);
  QF_CUDA_CHECK(cudaGetLastError());
}

void add_bias(float* x, const float* bias, int64_t n_rows, int64_t dim, stream_t stream) {
  const int64_t n = n_rows * dim;
  if (n == 0) return;
  add_bias_kernel<<<grid_1d(n, 256), 256, 0, stream>>>(x, bias, n, dim);
  QF_CUDA_CHECK(cudaGetLastError());
}

void softmax_rows(float* x, int64_t n_rows, int64_t n, stream_t stream) {
  if (n_rows == 0) return;
  softmax_kernel<<<unsigned(n_rows), 256, 0, stream>>>(x, n);
  QF_CUDA_CHECK(cudaGetLastError());
}

void argmax_rows(const float* x, int64_t n_rows, int64_t n, int32_t* out, stream_t stream) {
  if (n_rows == 0) return;
  argmax_kernel<<<unsigned(n_rows), 1024, 0, stream>>>(x, n, out);
  QF_CUDA_CHECK(cudaGetLastError());
}

void top_logprob_rows(const float* x, int64_t n_rows, int64_t n, float* out, stream_t stream) {
  if (n_rows == 0) return;
  top_logprob_kernel<<<unsigned(n_rows), 256, 0, stream>>>(x, n, out);
  QF_CUDA_CHECK(cudaGetLastError());
}

}  // namespace qf::infer::cuda
