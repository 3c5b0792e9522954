// Device memory read bandwidth (GB/s): a grid-stride kernel sums a 2 GiB
// buffer with 16-byte loads; the median of several runs is printed. Decode
// speed is compared against this figure (weights read per second / this).
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <vector>

__global__ void read_kernel(const float4* __restrict__ p, size_t n, float* out) {
  float acc = 0.f;
  for (size_t i = size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x) {
    const float4 v = p[i];
    acc += v.x + v.y + v.z + v.w;
  }
  if (acc == 1234.5f) out[0] = acc;  // keeps the loads alive
}

int main() {
  int n_dev = 0;
  if (cudaGetDeviceCount(&n_dev) != cudaSuccess || n_dev == 0) {
    std::printf("no CUDA device\n");
    return 0;
  }
  const size_t bytes = size_t(2) << 30;
  float4* buf = nullptr;
  float* out = nullptr;
  if (cudaMalloc(&buf, bytes) != cudaSuccess || cudaMalloc(&out, sizeof(float)) != cudaSuccess) {
    std::printf("cudaMalloc failed\n");
    return 1;
  }
  cudaMemset(buf, 0, bytes);
  cudaDeviceProp prop{};
  cudaGetDeviceProperties(&prop, 0);
  const int blocks = prop.multiProcessorCount * 8;
  cudaEvent_t a, b;
  cudaEventCreate(&a);
  cudaEventCreate(&b);
  std::vector<double> gbs;
  for (int r = 0; r < 11; ++r) {
    cudaEventRecord(a);
    read_kernel<<<blocks, 512>>>(buf, bytes / sizeof(float4), out);
    cudaEventRecord(b);
    cudaEventSynchronize(b);
    float ms = 0;
    cudaEventElapsedTime(&ms, a, b);
    if (r > 0) gbs.push_back(double(bytes) / (ms * 1e-3) / 1e9);
  }
  std::sort(gbs.begin(), gbs.end());
  std::printf("device: %s\n", prop.name);
  std::printf("read bandwidth: median %.0f GB/s (min %.0f, max %.0f)\n", gbs[gbs.size() / 2], gbs.front(), gbs.back());
  cudaFree(buf);
  cudaFree(out);
  return 0;
}
