// CPU kernel API used by the model forward pass.
//
// Weights stay in their GGUF block layout, except Q8_0, Q5_0, Q4_K and Q6_K
// weights of 16 rows or more, whose rows prepare_weight interleaves sixteen
// at a time into a copy of its own (repack_q8_0.h, repack_q5_0x16.h,
// repack_q4_k.h, repack_q6_k.h), and smaller Q5_0 weights of rows 8 blocks
// long or more, which it regroups (repack_q5_0.h). matmul quantizes activations internally the way llama.cpp
// does: Q8_0 blocks (32 values, one fp16 scale) against the 32-element
// weight types (q8_0, q4_0, q4_1, q5_0, q5_1),
// Q8_K blocks (256 values, f32 scale, 16-value sums) against the k-quants;
// f32/f16/bf16 weights are dotted with the float activations directly.
// Every op has a scalar reference; AVX2/FMA and AVX-512(+VNNI) versions are
// chosen at run time from CPUID (set_kernel_level forces one for tests).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string_view>
#include <vector>

#include "inference/backend/cpu/thread_pool.h"
#include "inference/core/cancellation.h"
#include "inference/core/huge_pages.h"
#include "inference/core/ggml_types.h"

namespace qf::infer::cpu {

struct weight_matrix {  // W[rows][cols] stored in a GGUF type; row r at data + r * row_bytes
  ggml_type type{};
  int64_t rows = 0, cols = 0;
  const uint8_t* data = nullptr;
  size_t row_bytes = 0;
  // The rearranged copy prepare_weight made (Q8_0, Q5_0, Q4_K and Q6_K
  // interleaved, or small Q5_0 weights regrouped); when set, data is not
  // read again.
  std::shared_ptr<const void> repacked;
};
// Wraps (and may regroup) a weight at load time. Supported: f32 f16 bf16 q8_0 q4_0 q4_1 q5_0 q5_1
// q4_k q5_k q6_k. Once it returns a weight with `repacked` set, the caller may free `data`.
// Throws std::invalid_argument for another type or a row length that does not fit its blocks.
// The copy comes from `arena` (one per backend, so that a model's copies
// share huge pages), or without one from a mapping of its own.
weight_matrix prepare_weight(ggml_type type, int64_t rows, int64_t cols, const uint8_t* data,
                             huge_arena* arena = nullptr);
// The decode (one-token) matmul jobs in the order they ran. A decode step
// runs the same jobs in the same order every token, so the job that came
// after this one last time is the one to read ahead for: once a worker's
// share of a job is done, it reads the start of its part of the next job's
// weights (thread_pool::read_after_share) while the caller runs the serial
// ops in between. Only the copies prepare_weight made are read ahead (the
// read holds a reference to them). One per backend, used like the pool by
// one thread at a time; a mismatch relearns from there.
struct gemv_order_state;  // matmul.cpp
class gemv_order {
 public:
  gemv_order();
  ~gemv_order();
  gemv_order(const gemv_order&) = delete;
  gemv_order& operator=(const gemv_order&) = delete;
  bool enabled = true;  // off: nothing is recorded or read ahead (benchmarks compare)
  gemv_order_state& state() { return *state_; }
  std::vector<const weight_matrix*> next_job() const;  // the job expected next; empty while none is known

 private:
  std::unique_ptr<gemv_order_state> state_;
};
// y[t*rows + r] = sum_c W[r][c] * x[t*cols + c] for t < n_tokens.
// n_tokens == 1 takes the decode (GEMV) path, n_tokens > 1 the prefill (GEMM) path.
// Activations are quantized internally (Q8_0 blocks for the 32-element types, Q8_K for k-quants).
// With `stop`, threads stop taking row blocks once it is cancelled: y is then
// partly written, and the caller must discard it.
// With `order`, a one-token matmul records itself there and has the workers
// read ahead for the job that followed it last time.
void matmul(thread_pool& pool, const weight_matrix& w, const float* x, int64_t n_tokens, float* y,
            const cancel_token* stop = nullptr, gemv_order* order = nullptr);
// ys[i] = ws[i] x for every i, all matrices of the same columns: results equal
// to matmul() on each. Against one token, up to four matrices share one job
// on the pool (the threads' runs of row pieces span all their rows, and the
// activation is quantized once per format), which saves a join and a
// prefetcher ramp per matrix (decode's q/k/v and gate/up); against several
// tokens it is matmul() on each.
void matmul_many(thread_pool& pool, std::span<const weight_matrix* const> ws, const float* x, int64_t n_tokens,
                 std::span<float* const> ys, const cancel_token* stop = nullptr, gemv_order* order = nullptr);
void dequantize_row(ggml_type type, const void* src, float* dst, int64_t n);  // bit-exact to the layout
void dequantize_weight_row(const weight_matrix& w, int64_t r, float* dst);   // row r, whichever copy it reads
void quantize_row(ggml_type type, const float* src, void* dst, int64_t n);    // reference quantizers
void rms_norm(const float* x, const float* weight, float* y, int64_t n, float eps);
void softmax(float* x, int64_t n);  // in place, max-subtracted
float max_value(const float* x, int64_t n);  // the largest x[i], NaNs ignored; -inf for n == 0
// The log-probability of x's largest element under softmax(x), x untouched:
// -log sum exp(x - max), the exps vectorized and summed in chunks of
// k_logprob_chunk (exp_sum_chunk), the chunks' float sums added in double.
float top_logprob(const float* x, int64_t n);
inline constexpr int64_t k_logprob_chunk = 1024;
float exp_sum_chunk(const float* x, float max, int64_t m);  // sum exp(x[i] - max), m <= k_logprob_chunk
void silu_mul(const float* gate, const float* up, float* out, int64_t n);  // out = silu(gate) * up
// out = gelu(x) * up with GELU's tanh approximation (ggml_gelu); up == nullptr: out = gelu(x).
void gelu_mul(const float* x, const float* up, float* out, int64_t n);
// y = (x - mean) / sqrt(var + eps) * weight + bias (bias may be null); mean and var over the row.
void layer_norm(const float* x, const float* weight, const float* bias, float* y, int64_t n, float eps);
void scale(float* x, float s, int64_t n);  // x *= s in place
void add(const float* a, const float* b, float* out, int64_t n);
float dot_f32(const float* a, const float* b, int64_t n);
float dot_f16_f32(const fp16_t* a, const float* b, int64_t n);           // KV cache (F16) · query
void axpy_f16(float alpha, const fp16_t* x, float* y, int64_t n);        // y += alpha * x (V rows)
void f32_to_f16_row(const float* src, fp16_t* dst, int64_t n);
void f16_to_f32_row(const fp16_t* src, float* dst, int64_t n);
struct cpu_features {
  bool avx2 = false, fma = false, f16c = false, avx512f = false, avx512bw = false, avx512vl = false, avx512vnni = false;
  bool intel = false;  // the vendor: decode prefetch pays on Intel cores, not on AMD Zen 4 (quant_kernels_avx512.cpp)
};
const cpu_features& detect_cpu();
// Forces the scalar reference (or a given level) for testing: "scalar", "avx2", "avx512", "auto".
// A level the CPU lacks falls back to the best one it has. Not thread-safe with running kernels.
void set_kernel_level(std::string_view level);
// The level in use now: "scalar", "avx2" or "avx512".
std::string_view kernel_level();

}  // namespace qf::infer::cpu
