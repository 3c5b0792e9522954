// Host-callable CUDA kernels of the engine, one .cu file per op.
//
// Every pointer is device memory; every launch is asynchronous on `stream`.
// Shapes follow the CPU backend: activations are row-major [n_tokens][dim],
// weights W[rows][cols] stay in their GGUF block layout (uploaded once), and
// the KV cache is F16 or F32 [n_ctx][n_kv_head][head_dim] per layer. This header has
// no CUDA types so that plain C++ code (the backend, tests) can include it.
#pragma once

#include <cstddef>
#include <cstdint>

#include "inference/core/ggml_types.h"

struct CUstream_st;
struct cublasContext;

namespace qf::infer::cuda {

using stream_t = CUstream_st*;

// --- device management (device.cu) ---
int device_count();  // 0 when there is no device or no driver
// Human-readable description of device 0 ("NVIDIA H200, sm_90, 139 GiB").
const char* device_description();
// Throws std::runtime_error naming the CUDA error.
void check(int cuda_error, const char* what);

// --- matmul (gemv.cu: fused dequantize + GEMV for decode and small batches) ---
// y[t*rows + r] = sum_c W[r][c] * x[t*cols + c] for t < n_tokens (n_tokens <= 8).
// Float weights (F32/F16/BF16) need cols % 32 == 0, like the block types.
bool gemv_supported(ggml_type type);
void gemv(ggml_type type, const void* w, int64_t rows, int64_t cols, const float* x,
          int64_t n_tokens, float* y, stream_t stream);

// --- dequantize.cu ---
// Dequantizes n_rows rows of `cols` elements to F16 (for cuBLAS prefill).
void dequantize_to_f16(ggml_type type, const void* w, int64_t n_rows, int64_t cols, uint16_t* out,
                       stream_t stream);
// Round to nearest; `saturate` clamps to +-65504 instead of overflowing to inf.
void f32_to_f16(const float* x, uint16_t* y, int64_t n, stream_t stream, bool saturate = false);
// out[i][:] = dequantized row ids[i] of a [n_table_rows][cols] table (token
// embeddings); an id outside [0, n_table_rows) gives a row of zeros.
void get_rows(ggml_type type, const void* table, int64_t n_table_rows, int64_t cols, const int32_t* ids,
              int64_t n_ids, float* out, stream_t stream);

// cuBLAS handle lifetime (gemm.cu); false when cuBLAS cannot start.
bool create_cublas(cublasContext** handle);
void destroy_cublas(cublasContext* handle);

// --- gemm.cu: prefill through cuBLAS (W dequantized to F16 scratch, F32 accumulate) ---
// scratch_w must hold rows*cols halves, scratch_x n_tokens*cols halves.
void gemm(cublasContext* handle, ggml_type type, const void* w, int64_t rows, int64_t cols,
          const float* x, int64_t n_tokens, float* y, uint16_t* scratch_w, uint16_t* scratch_x,
          stream_t stream);

// --- norm.cu ---
void rms_norm(const float* x, const float* weight, float* y, int64_t n_rows, int64_t dim, float eps,
              stream_t stream);
// y = (x - mean) / sqrt(var + eps) * weight + bias per row; bias may be null.
void layer_norm(const float* x, const float* weight, const float* bias, float* y, int64_t n_rows, int64_t dim,
                float eps, stream_t stream);

// --- rope.cu ---
// x: [n_tokens][n_heads][head_dim] rotated in place; pos: [n_tokens] device ints.
// The first n_rot dims of each head rotate: neox = false pairs (2i, 2i+1)
// (llama), neox = true pairs (i, i + n_rot/2) (qwen2); theta_i = pos *
// freq_scale / freq_base^(2i/n_rot), divided by factors[i] when `factors`
// (Llama 3.1 rope_freqs, n_rot/2 floats on the device) is not null.
// YaRN (ext_factor != 0; rope.h has the formula): the ramp over pairs
// [corr_low, corr_high] and cos/sin scaled by attn_factor * (1 + 0.1 ln(1 /
// freq_scale)); without YaRN cos/sin are scaled by attn_factor.
void rope(float* x, int64_t n_tokens, int64_t n_heads, int64_t head_dim, int64_t n_rot, const int32_t* pos,
          float freq_base, float freq_scale, const float* factors, bool neox, stream_t stream, float ext_factor = 0,
          float attn_factor = 1, float corr_low = 0, float corr_high = 0);
// Re-rotates cached keys (kv_type F16 or F32) in place by `delta` positions:
// rows [n_rows][n_heads][head_dim].
// A pure rotation: YaRN's angles, without its magnitude.
void rope_shift(void* k, ggml_type kv_type, int64_t n_rows, int64_t n_heads, int64_t head_dim, int64_t n_rot,
                int32_t delta, float freq_base, float freq_scale, const float* factors, bool neox, stream_t stream,
                float ext_factor = 0, float corr_low = 0, float corr_high = 0);

// --- kv_store.cu ---
// cache cells of positions [pos[0], pos[0] + n_rows) = src [n_rows][row_len]
// as kv_type (F16 or F32); pos[0] is read on the device; a position's cell is
// the position itself (blocks null) or found through the block table (blocks
// of 2^block_shift cells); rows past n_cells are skipped.
void kv_store(const float* src, int64_t n_rows, int64_t row_len, void* cache, ggml_type kv_type, int64_t n_cells,
              const int32_t* pos, const int32_t* blocks, int block_shift, stream_t stream);

// --- elementwise.cu ---
void silu_mul(const float* gate, const float* up, float* out, int64_t n, stream_t stream);
// out = gelu(x) * up (GELU's tanh approximation); up null: out = gelu(x).
void gelu_mul(const float* x, const float* up, float* out, int64_t n, stream_t stream);
void scale(float* x, float s, int64_t n, stream_t stream);  // x *= s
void add(const float* a, const float* b, float* out, int64_t n, stream_t stream);
// x[r][c] += bias[c]
void add_bias(float* x, const float* bias, int64_t n_rows, int64_t dim, stream_t stream);
void softmax_rows(float* x, int64_t n_rows, int64_t n, stream_t stream);
// out[r] = index of the largest of x[r][0..n) (lowest index on ties), r < n_rows.
void argmax_rows(const float* x, int64_t n_rows, int64_t n, int32_t* out, stream_t stream);
// out[r] = log-probability of the largest of x[r][0..n) under the row's
// softmax (-log sum exp(x - max)), r < n_rows.
void top_logprob_rows(const float* x, int64_t n_rows, int64_t n, float* out, stream_t stream);

// --- attention.cu: causal attention over the KV cache, flash-decoding style ---
// q:   [n_tokens][n_head][head_dim] F32, token t sits at position n_past + t,
//      n_past = pos[0] read on the device when pos is not null
// k,v: [n_cells][n_head_kv][head_dim] in kv_type (F16 or F32), positions 0 .. n_past + n_tokens - 1 filled;
//      position p in cell p, or, with a block table (blocks not null), in cell
//      blocks[p >> block_shift] << block_shift | (p & (2^block_shift - 1))
// out: [n_tokens][n_head][head_dim] F32
// n_kv_max (used with pos): a bound on n_past + n_tokens, which sizes the grid;
// keys past it are never read (a position beyond the cache cannot read out of bounds).
// scratch: attention_scratch_floats(n_tokens, n_head, head_dim, pos ? n_kv_max : n_past + n_tokens) floats.
int64_t attention_scratch_floats(int64_t n_tokens, int64_t n_head, int64_t head_dim, int64_t n_kv);
void attention(const float* q, const void* k, const void* v, ggml_type kv_type, float* out, int64_t n_tokens,
               int64_t n_past, const int32_t* pos, int64_t n_kv_max, int64_t n_head, int64_t n_head_kv,
               int64_t head_dim, float scale, float* scratch, const int32_t* blocks, int block_shift,
               stream_t stream);

// --- graph.cu: CUDA graphs of a recorded stream ---
// begin_capture starts recording `stream` (thread-local mode); end_capture
// stops it and returns an instantiated executable graph, or nullptr when the
// recording was invalidated (*why then names the CUDA error) or when
// `instantiate` is false (a recording being thrown away).
struct graph_exec;
void begin_capture(stream_t stream);
graph_exec* end_capture(stream_t stream, bool instantiate, const char** why);
void launch_graph(graph_exec* g, stream_t stream);
void destroy_graph(graph_exec* g);

}  // namespace qf::infer::cuda
