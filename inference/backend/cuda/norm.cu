// RMSNorm and LayerNorm: one thread block per row; y = x / sqrt(mean(x^2) +
// eps) * weight, and y = (x - mean) / sqrt(var + eps) * weight + bias.
#include "inference/backend/cuda/common.cuh"

namespace qf::infer::cuda {
namespace {

__global__ void rms_norm_kernel(const float* __restrict__ x, const float* __restrict__ w,
                                float* __restrict__ y, int64_t dim, float eps) {
  const float* xr = x + int64_t(blockIdx.x) * dim;
  float* yr = y + int64_t(blockIdx.x) * dim;
  float ss = 0.f;
  for (int64_t i = threadIdx.x; i < dim; i += blockDim.x) ss += xr[i] * xr[i];
  __shared__ float partial[32];
  ss = warp_sum(ss);
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  if (lane == 0) partial[warp] = ss;
  __syncthreads();
  if (warp == 0) {
    float v = lane < int(blockDim.x / 32) ? partial[lane] : 0.f;
    v = warp_sum(v);
    if (lane == 0) partial[0] = v;
  }
  __syncthreads();
  const float scale = rsqrtf(partial[0] / float(dim) + eps);
  for (int64_t i = threadIdx.x; i < dim; i += blockDim.x) yr[i] = xr[i] * scale * w[i];
}

// The sum of v over the block (every thread gets it); `partial` is [32].
__device__ float block_sum(float v, float* partial) {
  v = warp_sum(v);
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  __syncthreads();  // partial may still be read from a previous call
  if (lane == 0) partial[warp] = v;
  __syncthreads();
  if (warp == 0) {
    float p = lane < int(blockDim.x / 32) ? partial[lane] : 0.f;
    p = warp_sum(p);
    if (lane == 0) partial[0] = p;
  }
  __syncthreads();
  return partial[0];
}

// Two passes as the CPU: the mean, then the centred sum of squares.
__global__ void layer_norm_kernel(const float* __restrict__ x, const float* __restrict__ w,
                                  const float* __restrict__ b, float* __restrict__ y, int64_t dim, float eps) {
  const float* xr = x + int64_t(blockIdx.x) * dim;
  float* yr = y + int64_t(blockIdx.x) * dim;
  __shared__ float partial[32];
  float s = 0.f;
  for (int64_t i = threadIdx.x; i < dim; i += blockDim.x) s += xr[i];
  const float mean = block_sum(s, partial) / float(dim);
  float ss = 0.f;
  for (int64_t i = threadIdx.x; i < dim; i += blockDim.x) ss += (xr[i] - mean) * (xr[i] - mean);
  const float inv = rsqrtf(block_sum(ss, partial) / float(dim) + eps);
  for (int64_t i = threadIdx.x; i < dim; i += blockDim.x)
    yr[i] = (xr[i] - mean) * inv * w[i] + (b ? b[i] : 0.f);
}

}  // namespace

void layer_norm(const float* x, const float* weight, const float* bias, float* y, int64_t n_rows, int64_t dim,
                float eps, stream_t stream) {
  if (n_rows == 0) return;
  layer_norm_kernel<<<unsigned(n_rows), 256, 0, stream>>>(x, weight, bias, y, dim, eps);
  QF_CUDA_CHECK(cudaGetLastError());
}

void rms_norm(const float* x, const float* weight, float* y, int64_t n_rows, int64_t dim, float eps,
              stream_t stream) {
  if (n_rows == 0) return;
  rms_norm_kernel<<<unsigned(n_rows), 256, 0, stream>>>(x, weight, y, dim, eps);
  QF_CUDA_CHECK(cudaGetLastError());
}

}  // namespace qf::infer::cuda
