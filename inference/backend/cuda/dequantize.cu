// Dequantization on the device: whole weight matrices to F16 (the cuBLAS
// prefill path, saturating at the F16 range), activations to F16, and
// embedding rows to F32 (get_rows; an id outside the table gives a zero row
// rather than a read out of bounds). One thread per (block, part) of 8
// elements, the same decoding as gemv.cu.
#include <stdexcept>

#include "inference/backend/cuda/common.cuh"

namespace qf::infer::cuda {
namespace {

template <ggml_type T, typename Out>
__global__ void dequant_kernel(const uint8_t* __restrict__ w, int64_t n_rows, int64_t cols,
                               const int32_t* __restrict__ ids, int64_t n_table_rows, Out* __restrict__ out) {
  using tr = qtraits<T>;
  const int64_t blocks_per_row = cols / tr::qk;
  const int64_t parts_per_row = blocks_per_row * tr::parts;
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n_rows * parts_per_row) return;
  const int64_t r = i / parts_per_row;
  const int64_t rem = i % parts_per_row;
  const int64_t b = rem / tr::parts;
  const int p = int(rem % tr::parts);
  const int64_t src_row = ids ? ids[r] : r;
  int idx[8];
  float val[8];
  if (src_row >= 0 && src_row < n_table_rows) {
    tr::part(w + (src_row * blocks_per_row + b) * tr::bytes, p, idx, val);
  } else {
    tr::part(w + b * tr::bytes, p, idx, val);  // row 0 for the element order; values zeroed
#pragma unroll
    for (int j = 0; j < 8; ++j) val[j] = 0.0f;
  }
  Out* o = out + r * cols + b * tr::qk;
#pragma unroll
  for (int j = 0; j < 8; ++j) {
    if constexpr (sizeof(Out) == 2) o[idx[j]] = f2h_sat(val[j]);
    else o[idx[j]] = val[j];
  }
}

template <typename Out>
void run_dequant(ggml_type type, const void* w, int64_t n_rows, int64_t cols, const int32_t* ids,
                 int64_t n_table_rows, Out* out, stream_t s) {
  const bool ok = dispatch_type(type, [&](auto tag) {
    constexpr ggml_type T = decltype(tag)::value;
    using tr = qtraits<T>;
    const int64_t n = n_rows * (cols / tr::qk) * tr::parts;
    if (n == 0) return;
    dequant_kernel<T, Out><<<grid_1d(n, 256), 256, 0, s>>>(static_cast<const uint8_t*>(w), n_rows, cols,
                                                            ids, n_table_rows, out);
  });
  if (!ok)
    throw std::invalid_argument("cuda dequantize: unsupported type");
  QF_CUDA_CHECK(cudaGetLastError());
}

__global__ void f32_to_f16_kernel(const float* x, uint16_t* y, int64_t n, bool saturate) {
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) y[i] = saturate ? f2h_sat(x[i]) : f2h(x[i]);
}

}  // namespace

void dequantize_to_f16(ggml_type type, const void* w, int64_t n_rows, int64_t cols, uint16_t* out,
                       stream_t stream) {
  run_dequant<uint16_t>(type, w, n_rows, cols, nullptr, n_rows, out, stream);
}

void get_rows(ggml_type type, const void* table, int64_t n_table_rows, int64_t cols, const int32_t* ids,
              int64_t n_ids, float* out, stream_t stream) {
  run_dequant<float>(type, table, n_ids, cols, ids, n_table_rows, out, stream);
}

void f32_to_f16(const float* x, uint16_t* y, int64_t n, stream_t stream, bool saturate) {
  if (n == 0) return;
  f32_to_f16_kernel<<<grid_1d(n, 256), 256, 0, stream>>>(x, y, n, saturate);
  QF_CUDA_CHECK(cudaGetLastError());
}

}  // namespace qf::infer::cuda
