// The CPU backend: buffers are aligned host memory, weights are the GGUF bytes
// in place (memory-mapped) wrapped, and possibly repacked, by the kernels'
// prepare_weight(); ops call the SIMD kernels of inference/backend/cpu and
// spread rows, heads or tokens over one persistent thread pool.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "inference/backend/backend.h"
#include "inference/backend/cpu/ops.h"
#include "inference/backend/cpu/thread_pool.h"

namespace qf::infer {

// Zero-filled memory for activations and KV caches. A large buffer is an
// anonymous mapping of its own, so its pages cost memory only once written:
// a context's block pool is sized for n_ctx cells, and a pool that holds a few
// hundred cells stays that small (every daemon session has one).
class cpu_buffer final : public buffer {
 public:
  explicit cpu_buffer(size_t bytes);
  ~cpu_buffer() override;
  uint8_t* data() { return data_; }
  const uint8_t* data() const { return data_; }

 private:
  uint8_t* data_;
  bool mapped_ = false;
};

class cpu_weight final : public weight {
 public:
  cpu_weight(const cpu::weight_matrix& m) : weight(m.type, m.rows, m.cols), m_(m) {}
  const cpu::weight_matrix& matrix() const { return m_; }
  bool owns_copy() const override { return m_.repacked != nullptr; }  // interleaved Q8_0/Q5_0/Q4_K/Q6_K, regrouped Q5_0

 private:
  cpu::weight_matrix m_;
};

class cpu_backend final : public backend {
 public:
  explicit cpu_backend(int n_threads);

  std::string name() const override { return "cpu"; }
  std::string describe() const override;
  backend_caps caps() const override;
  bool supports_weight_type(ggml_type t) const override;

  weight_ptr upload_weight(ggml_type type, int64_t rows, int64_t cols, const uint8_t* data) override;
  buffer_ptr alloc(size_t bytes) override;
  void upload(buffer& dst, size_t dst_offset, const void* src, size_t bytes) override;
  void download(const buffer& src, size_t src_offset, void* dst, size_t bytes) override;
  void synchronize() override {}
  void copy(buffer& dst, size_t dst_offset, const buffer& src, size_t src_offset, size_t bytes) override;
  void reserve_attention(int64_t n_ctx, int64_t n_head) override;

  void get_rows(const weight& table, const buffer& ids, int64_t n, f32_ref out) override;
  void matmul(const weight& w, f32_ref x, int64_t n, f32_ref y) override;
  void matmul_many(std::initializer_list<matmul_out> outs, f32_ref x, int64_t n) override;
  void argmax_rows(f32_ref x, int64_t n_rows, int64_t n_cols, buffer& out) override;
  void top_logprob_rows(f32_ref x, int64_t n_rows, int64_t n_cols, f32_ref out) override;
  void argmax_logprob_rows(f32_ref x, int64_t n_rows, int64_t n_cols, buffer& best, f32_ref lp) override;
  void rms_norm(f32_ref x, const buffer& w, f32_ref y, int64_t n_rows, int64_t n_cols, float eps) override;
  void layer_norm(f32_ref x, const buffer& w, const buffer* b, f32_ref y, int64_t n_rows, int64_t n_cols,
                  float eps) override;
  void add_bias(f32_ref x, const buffer& b, int64_t n_rows, int64_t n_cols) override;
  void add(f32_ref a, f32_ref b, f32_ref out, int64_t n) override;
  void prefetch(const buffer& b, size_t offset, size_t bytes) override;
  void swiglu(f32_ref gate, f32_ref up, f32_ref out, int64_t n) override;
  void gelu(f32_ref x, f32_ref out, int64_t n) override;
  void geglu(f32_ref gate, f32_ref up, f32_ref out, int64_t n) override;
  void scale(f32_ref x, float s, int64_t n) override;
  void rope(f32_ref x, const buffer& pos, int64_t n_tokens, int64_t n_heads, int64_t head_dim,
            const rope_params& rp) override;

  void kv_store(f32_ref src, int64_t n_rows, int64_t row_len, buffer& cache, ggml_type kv_type, const buffer& pos,
                const kv_table& table) override;
  void attention(f32_ref q, const buffer& k_cache, const buffer& v_cache, f32_ref out,
                 const attention_params& ap) override;
  void kv_move(buffer& cache, ggml_type kv_type, int64_t row_len, int64_t src, int64_t dst, int64_t n) override;
  void kv_rope_shift(buffer& k_cache, ggml_type kv_type, int64_t first, int64_t n, int64_t n_head_kv,
                     int64_t head_dim, int64_t delta, const rope_params& rp) override;

  void set_interrupt(const cancel_token* t) override { interrupt_ = t; }

  cpu::thread_pool& pool() { return pool_; }
  // Whether decode matmuls have the pool's workers read ahead for the next
  // one (cpu::gemv_order; on by default): benchmarks compare the two.
  void set_read_ahead(bool on) { order_.enabled = on; }

 private:
  // Runs fn(begin, end) over [0, n) split in contiguous chunks, one per thread;
  // small ranges (n < min_parallel) run on the calling thread.
  template <class Fn>
  void parallel_for(int64_t n, int64_t min_parallel, const Fn& fn);
  float* scratch(int ith, size_t n_floats);  // per-thread scratch, grown on demand
  // The largest value of each k_logprob_chunk columns of row into
  // chunk_max_; the largest of all (NaNs ignored).
  float chunk_maxes(const float* row, int64_t n);
  // One row's greedy pick and its log-probability (either out null to skip it).
  void pick_row(const float* row, int64_t n, int32_t* best, float* lp);
  // RoPE's cos/sin for n_tokens positions, [n_tokens][n_rot]: the last table
  // when positions, parameters and factors are the same.
  const float* rope_table(const int32_t* pos, int64_t n_tokens, const rope_params& rp, const float* factors);
  struct rope_table_key {
    bool valid = false;
    std::vector<int32_t> pos;
    rope_params params;
    const float* factors = nullptr;
  };

  cpu::thread_pool pool_;
  cpu::gemv_order order_;  // decode matmuls' order, for the workers' read-ahead
  const cancel_token* interrupt_ = nullptr;  // matmuls stop taking work once it is cancelled
  std::vector<std::vector<float>> scratch_;  // [n_threads][...]
  std::vector<float> chunk_max_, chunk_sum_;  // per chunk of a vocabulary-long row (argmax, top log-prob)
  rope_table_key rope_key_;
  std::vector<float> rope_cs_;  // the table rope_key_ describes
  huge_arena weight_arena_;                  // regrouped weights' copies, sharing huge pages
};

}  // namespace qf::infer
