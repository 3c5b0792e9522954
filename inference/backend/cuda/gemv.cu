// Fused dequantize + GEMV for decode (and small batches up to 8 tokens, e.g.
// speculative verification). W warps per weight row: the row's (block, part)
// pairs are strided over the W * 32 lanes so that consecutive lanes read
// consecutive bytes, each weight byte is read once for all tokens, and the
// lanes reduce at the end (a warp shuffle, then shared memory across the W
// warps). Matrices with many rows use W = 1; those with few rows (896 x 896,
// the K/V projections, ffn_down at 0.5B) use W = 4 so that enough warps (and
// loads) are in flight on every SM. Decode is bound by weight bandwidth, so
// the activations stay F32.
#include <cstdint>
#include <stdexcept>

#include "inference/backend/cuda/common.cuh"

namespace qf::infer::cuda {
namespace {

constexpr int k_warps_per_block = 4;
constexpr int64_t k_split_rows_below = 8192;  // rows under this: 4 warps per row

// NT: the tokens the registers are sized for; nt <= NT: the tokens there are
// (5..7 tokens run in the NT = 8 kernel, reading the weights once).
template <ggml_type T, int NT, int W>
__global__ void gemv_kernel(const uint8_t* __restrict__ w, int64_t rows, int64_t cols,
                            const float* __restrict__ x, float* __restrict__ y, int nt) {
  static_assert(k_warps_per_block % W == 0);
  using tr = qtraits<T>;
  static_assert(tr::quad_gap % 4 == 0 && tr::qk % 4 == 0, "activation runs must stay 16-byte aligned");
  const int lane = threadIdx.x;
  const int sub = int(threadIdx.y) % W;  // this warp's share of the row
  const int64_t row = int64_t(blockIdx.x) * (k_warps_per_block / W) + threadIdx.y / W;
  // Whole warps are active or not; with W = 4 (one row per block) every warp
  // is, but the flag (not an early return) keeps __syncthreads below safe for
  // any W that leaves several rows per block.
  const bool active = row < rows;
  float acc[NT];
#pragma unroll
  for (int t = 0; t < NT; ++t) acc[t] = 0.f;

  if (active) {
    const int64_t n_blocks = cols / tr::qk;
    const uint8_t* wrow = w + row * n_blocks * tr::bytes;
    const int64_t n_parts = n_blocks * tr::parts;
#pragma unroll 2
    for (int64_t i = int64_t(sub) * 32 + lane; i < n_parts; i += 32 * W) {
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
        if constexpr (tr::quad_gap > 0) {  // two 16-byte loads (x is 16-byte aligned, see gemv())
          const float* xq = xb + t * cols + tr::quad_a(p);
          const float4 a = *reinterpret_cast<const float4*>(xq);
          const float4 c = *reinterpret_cast<const float4*>(xq + tr::quad_gap);
          s = val[0] * a.x + val[1] * a.y + val[2] * a.z + val[3] * a.w + val[4] * c.x + val[5] * c.y +
              val[6] * c.z + val[7] * c.w;
        } else {
#pragma unroll
          for (int j = 0; j < 8; ++j) s += val[j] * xb[t * cols + idx[j]];
        }
        acc[t] += s;
      }
    }
  }
  if constexpr (W == 1) {
    if (!active) return;
#pragma unroll
    for (int t = 0; t < NT; ++t) {
      if (t >= nt) break;
      const float s = warp_sum(acc[t]);
      if (lane == 0) y[t * rows + row] = s;
    }
  } else {
    __shared__ float red[k_warps_per_block][NT];
#pragma unroll
    for (int t = 0; t < NT; ++t) {
      if (t >= nt) break;  // slots t >= nt are never read
      const float s = warp_sum(acc[t]);
      if (lane == 0) red[threadIdx.y][t] = s;
    }
    __syncthreads();
    if (active && sub == 0 && lane < nt) {  // lane t writes token t's sum
      float s = 0.f;
#pragma unroll
      for (int k = 0; k < W; ++k) s += red[threadIdx.y + k][lane];
      y[int64_t(lane) * rows + row] = s;
    }
  }
}

template <ggml_type T, int NT, int W>
void launch_w(const void* w, int64_t rows, int64_t cols, const float* x, int nt, float* y, stream_t s) {
  constexpr int rows_per_block = k_warps_per_block / W;
  dim3 block(32, k_warps_per_block);
  dim3 grid(grid_1d(rows, rows_per_block));
  gemv_kernel<T, NT, W><<<grid, block, 0, s>>>(static_cast<const uint8_t*>(w), rows, cols, x, y, nt);
}

template <ggml_type T, int NT>
void launch(const void* w, int64_t rows, int64_t cols, const float* x, int nt, float* y, stream_t s) {
  if (rows < k_split_rows_below)
    launch_w<T, NT, k_warps_per_block>(w, rows, cols, x, nt, y, s);
  else
    launch_w<T, NT, 1>(w, rows, cols, x, nt, y, s);
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
  // Activations are read 16 bytes at a time: rows of a multiple of 32 floats
  // keep every row aligned once the first is.
  if (reinterpret_cast<uintptr_t>(x) % 16 != 0)
    throw std::invalid_argument("cuda gemv: activations must be 16-byte aligned");
  const bool ok = dispatch_type(type, [&](auto tag) {
    launch_tokens<decltype(tag)::value>(w, rows, cols, x, n_tokens, y, stream);
  });
  if (!ok)
    throw std::invalid_argument("cuda gemv: unsupported weight type");
  QF_CUDA_CHECK(cudaGetLastError());
}

}  // namespace qf::infer::cuda
