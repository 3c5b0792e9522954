// Fused dequantize + GEMV for decode (and small batches up to 8 tokens, e.g.
// speculative verification). One warp per weight row: lanes stride over the
// row's (block, part) pairs so that consecutive lanes read consecutive bytes,
// each weight byte is read once for all tokens, and the warp reduces at the
// end. Decode is bound by weight bandwidth, so the activations stay F32.
#include <stdexcept>

#include "inference/backend/cuda/common.cuh"

namespace qf::infer::cuda {
namespace {

constexpr int k_rows_per_block = 4;  // warps per thread block

// NT: the tokens the registers are sized for; nt <= NT: the tokens there are
// (5..7 tokens run in the NT = 8 kernel, reading the weights once).
template <ggml_type T, int NT>
__global__ void gemv_kernel(const uint8_t* __restrict__ w, int64_t rows, int64_t cols,
                            const float* __restrict__ x, float* __restrict__ y, int nt) {
  using tr = qtraits<T>;
  const int lane = threadIdx.x;
  const int64_t row = int64_t(blockIdx.x) * k_rows_per_block + threadIdx.y;
  if (row >= rows) return;
  const int64_t n_blocks = cols / tr::qk;
  const uint8_t* wrow = w + row * n_blocks * tr::bytes;
  float acc[NT];
#pragma unroll
  for (int t = 0; t < NT; ++t) acc[t] = 0.f;

  const int64_t n_parts = n_blocks * tr::parts;
#pragma unroll 2
  for (int64_t i = lane; i < n_parts; i += 32) {
    const int64_t b = i / tr::parts;
    const int p = int(i % tr::parts);
    int idx[8];
    float val[8];
    tr::part(wrow + b * tr::bytes, p, idx, val);
    const float* xb = x + b * tr::qk;
#pragma unroll
    for (int t = 0; t < NT; ++t) {
      if (t >= nt) break;
      float s = 0.f;
#pragma unroll
      for (int j = 0; j < 8; ++j) s += val[j] * xb[t * cols + idx[j]];
      acc[t] += s;
    }
  }
#pragma unroll
  for (int t = 0; t < NT; ++t) {
    if (t >= nt) break;
    const float s = warp_sum(acc[t]);
    if (lane == 0) y[t * rows + row] = s;
  }
}

template <ggml_type T, int NT>
void launch(const void* w, int64_t rows, int64_t cols, const float* x, int nt, float* y, stream_t s) {
  dim3 block(32, k_rows_per_block);
  dim3 grid(grid_1d(rows, k_rows_per_block));
  gemv_kernel<T, NT><<<grid, block, 0, s>>>(static_cast<const uint8_t*>(w), rows, cols, x, y, nt);
}

template <ggml_type T>
void launch_tokens(const void* w, int64_t rows, int64_t cols, const float* x, int64_t nt, float* y,
                   stream_t s) {
  switch (nt) {
    case 1: launch<T, 1>(w, rows, cols, x, 1, y, s); break;
    case 2: launch<T, 2>(w, rows, cols, x, 2, y, s); break;
    case 3: launch<T, 3>(w, rows, cols, x, 3, y, s); break;
    case 4: launch<T, 4>(w, rows, cols, x, 4, y, s); break;
    default: launch<T, 8>(w, rows, cols, x, int(nt), y, s); break;  // 5..8
  }
}

}  // namespace

bool gemv_supported(ggml_type type) {
  return dispatch_type(type, [](auto) {});
}

void gemv(ggml_type type, const void* w, int64_t rows, int64_t cols, const float* x, int64_t n_tokens,
          float* y, stream_t stream) {
  if (n_tokens < 1 || n_tokens > 8) throw std::invalid_argument("cuda gemv: n_tokens must be 1..8");
  if (cols % 32 != 0) throw std::invalid_argument("cuda gemv: cols must be a multiple of 32");
  const bool ok = dispatch_type(type, [&](auto tag) {
    launch_tokens<decltype(tag)::value>(w, rows, cols, x, n_tokens, y, stream);
  });
  if (!ok)
    throw std::invalid_argument("cuda gemv: unsupported weight type");
  QF_CUDA_CHECK(cudaGetLastError());
}

}  // namespace qf::infer::cuda
