// Writes a ubatch's K or V rows into the KV cache (F16 or F32) at the cells of
// their positions (through the sequence's block table when the cache is
// paged). The first position is read on the device (pos[0]) so that a
// recorded step graph stores each step at its own position; rows that would
// land past the cache's n_cells are skipped (a kernel cannot throw).
#include <stdexcept>

#include "inference/backend/cuda/common.cuh"

namespace qf::infer::cuda {
namespace {

__device__ __forceinline__ void put(uint16_t* p, float x) { *p = f2h(x); }
__device__ __forceinline__ void put(float* p, float x) { *p = x; }

// grid (row chunks of 256 elements, rows)
template <typename KV>
__global__ void kv_store_kernel(const float* __restrict__ src, KV* __restrict__ cache, int64_t row_len,
                                int64_t n_cells, const int32_t* __restrict__ pos,
                                const int32_t* __restrict__ blocks, int shift) {
  const int64_t r = blockIdx.y;
  const int64_t c = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  const int64_t p = int64_t(pos[0]) + r;
  if (p < 0) return;
  const int64_t cell = kv_cell(blocks, shift, p);
  if (c >= row_len || cell < 0 || cell >= n_cells) return;
  put(cache + cell * row_len + c, src[r * row_len + c]);
}

}  // namespace

void kv_store(const float* src, int64_t n_rows, int64_t row_len, void* cache, ggml_type kv_type, int64_t n_cells,
              const int32_t* pos, const int32_t* blocks, int block_shift, stream_t stream) {
  if (n_rows == 0 || row_len == 0) return;
  const dim3 grid{grid_1d(row_len, 256), unsigned(n_rows)};
  if (kv_type == ggml_type::f16)
    kv_store_kernel<<<grid, 256, 0, stream>>>(src, static_cast<uint16_t*>(cache), row_len, n_cells, pos, blocks,
                                                   block_shift);
  else if (kv_type == ggml_type::f32)
    kv_store_kernel<<<grid, 256, 0, stream>>>(src, static_cast<float*>(cache), row_len, n_cells, pos, blocks,
                                                   block_shift);
  else
    throw std::invalid_argument("cuda kv_store: the KV cache must be F16 or F32");
  QF_CUDA_CHECK(cudaGetLastError());
}

}  // namespace qf::infer::cuda
