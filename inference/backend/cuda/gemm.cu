// Prefill matmul through cuBLAS: the quantized weight is dequantized to an
// F16 scratch matrix, the activations converted to F16 (both saturating at
// +-65504 rather than overflowing to inf), and cublasGemmEx runs on tensor
// cores with F32 accumulation and F32 output.
//
// Row-major y[nt][rows] = x[nt][cols] * W[rows][cols]^T is, in cuBLAS's
// column-major view, Y(rows x nt) = W'(cols x rows)^T * X(cols x nt).
#include <cublas_v2.h>

#include <stdexcept>
#include <string>

#include "inference/backend/cuda/common.cuh"

namespace qf::infer::cuda {

bool create_cublas(cublasContext** handle) {
  return cublasCreate(handle) == CUBLAS_STATUS_SUCCESS;
}

void destroy_cublas(cublasContext* handle) {
  if (handle) cublasDestroy(handle);
}

void gemm(cublasContext* handle, ggml_type type, const void* w, int64_t rows, int64_t cols,
          const float* x, int64_t n_tokens, float* y, uint16_t* scratch_w, uint16_t* scratch_x,
          stream_t stream) {
  const void* a = w;
  if (type != ggml_type::f16) {
    dequantize_to_f16(type, w, rows, cols, scratch_w, stream);
    a = scratch_w;
  }
  f32_to_f16(x, scratch_x, n_tokens * cols, stream, /*saturate=*/true);
  const float alpha = 1.0f, beta = 0.0f;
  cublasStatus_t st = cublasSetStream(handle, stream);
  if (st == CUBLAS_STATUS_SUCCESS) {
    st = cublasGemmEx(handle, CUBLAS_OP_T, CUBLAS_OP_N, int(rows), int(n_tokens), int(cols), &alpha, a,
                      CUDA_R_16F, int(cols), scratch_x, CUDA_R_16F, int(cols), &beta, y, CUDA_R_32F,
                      int(rows), CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
  }
  if (st != CUBLAS_STATUS_SUCCESS)
    throw std::runtime_error("cublasGemmEx failed with status " + std::to_string(int(st)));
}

}  // namespace qf::infer::cuda
