// A device backend that misbehaves on purpose, for the device self-check's
// tests: it wraps the CPU backend, calls itself "fakegpu", and can return
// wrong numbers (every norm's output scaled by 1.25), fail as a device does
// (matmul throws the message of a CUDA error) or run out of memory (any
// allocation of 16 KiB or more, which the model's own buffers stay under and
// a context's scratch does not). `ops` counts the ops it was asked to run
// (shared, so that it outlives the backend).
#pragma once

#include <memory>
#include <new>
#include <stdexcept>
#include <string>

#include "inference/backend/backend.h"

namespace qf::test {

enum class fault { none, wrong_numbers, device_error, out_of_memory };

class faulty_backend final : public infer::backend {
 public:
  faulty_backend(fault f, int n_threads) : f_(f), in_(infer::make_cpu_backend(n_threads)) {}

  std::shared_ptr<int> ops = std::make_shared<int>(0);

  std::string name() const override { return "fakegpu"; }
  std::string describe() const override { return "fakegpu (a CPU backend with faults)"; }
  infer::backend_caps caps() const override { return in_->caps(); }
  bool supports_weight_type(infer::ggml_type t) const override { return in_->supports_weight_type(t); }
  infer::weight_ptr upload_weight(infer::ggml_type type, int64_t rows, int64_t cols, const uint8_t* data) override {
    return in_->upload_weight(type, rows, cols, data);
  }
  infer::buffer_ptr alloc(size_t bytes) override {
    if (f_ == fault::out_of_memory && bytes >= (16u << 10)) throw std::bad_alloc();
    return in_->alloc(bytes);
  }
  void upload(infer::buffer& dst, size_t off, const void* src, size_t bytes) override { in_->upload(dst, off, src, bytes); }
  void download(const infer::buffer& src, size_t off, void* dst, size_t bytes) override {
    in_->download(src, off, dst, bytes);
  }
  void synchronize() override { in_->synchronize(); }
  void reserve_attention(int64_t n_ctx, int64_t n_head) override { in_->reserve_attention(n_ctx, n_head); }

  void get_rows(const infer::weight& t, const infer::buffer& ids, int64_t n, infer::f32_ref out) override {
    ++*ops;
    in_->get_rows(t, ids, n, out);
  }
  void matmul(const infer::weight& w, infer::f32_ref x, int64_t n, infer::f32_ref y) override {
    ++*ops;
    if (f_ == fault::device_error)
      throw std::runtime_error("CUDA error in gemv: an illegal memory access was encountered");
    in_->matmul(w, x, n, y);
  }
  void rms_norm(infer::f32_ref x, const infer::buffer& w, infer::f32_ref y, int64_t n_rows, int64_t n_cols,
                float eps) override {
    ++*ops;
    in_->rms_norm(x, w, y, n_rows, n_cols, eps);
    if (f_ == fault::wrong_numbers) in_->scale(y, 1.25f, n_rows * n_cols);
  }
  void layer_norm(infer::f32_ref x, const infer::buffer& w, const infer::buffer* b, infer::f32_ref y, int64_t n_rows,
                  int64_t n_cols, float eps) override {
    ++*ops;
    in_->layer_norm(x, w, b, y, n_rows, n_cols, eps);
    if (f_ == fault::wrong_numbers) in_->scale(y, 1.25f, n_rows * n_cols);
  }
  void add_bias(infer::f32_ref x, const infer::buffer& b, int64_t n_rows, int64_t n_cols) override {
    ++*ops;
    in_->add_bias(x, b, n_rows, n_cols);
  }
  void add(infer::f32_ref a, infer::f32_ref b, infer::f32_ref out, int64_t n) override {
    ++*ops;
    in_->add(a, b, out, n);
  }
  void swiglu(infer::f32_ref g, infer::f32_ref u, infer::f32_ref out, int64_t n) override {
    ++*ops;
    in_->swiglu(g, u, out, n);
  }
  void gelu(infer::f32_ref x, infer::f32_ref out, int64_t n) override {
    ++*ops;
    in_->gelu(x, out, n);
  }
  void geglu(infer::f32_ref g, infer::f32_ref u, infer::f32_ref out, int64_t n) override {
    ++*ops;
    in_->geglu(g, u, out, n);
  }
  void scale(infer::f32_ref x, float s, int64_t n) override {
    ++*ops;
    in_->scale(x, s, n);
  }
  void rope(infer::f32_ref x, const infer::buffer& pos, int64_t n_tokens, int64_t n_heads, int64_t head_dim,
            const infer::rope_params& rp) override {
    ++*ops;
    in_->rope(x, pos, n_tokens, n_heads, head_dim, rp);
  }
  void argmax_rows(infer::f32_ref x, int64_t n_rows, int64_t n_cols, infer::buffer& out) override {
    ++*ops;
    in_->argmax_rows(x, n_rows, n_cols, out);
  }
  void top_logprob_rows(infer::f32_ref x, int64_t n_rows, int64_t n_cols, infer::f32_ref out) override {
    ++*ops;
    in_->top_logprob_rows(x, n_rows, n_cols, out);
  }
  void kv_store(infer::f32_ref src, int64_t n_rows, int64_t row_len, infer::buffer& cache, infer::ggml_type kv_type,
                const infer::buffer& pos, const infer::kv_table& table) override {
    ++*ops;
    in_->kv_store(src, n_rows, row_len, cache, kv_type, pos, table);
  }
  void attention(infer::f32_ref q, const infer::buffer& k, const infer::buffer& v, infer::f32_ref out,
                 const infer::attention_params& ap) override {
    ++*ops;
    in_->attention(q, k, v, out, ap);
  }
  void kv_move(infer::buffer& cache, infer::ggml_type kv_type, int64_t row_len, int64_t src, int64_t dst,
               int64_t n) override {
    in_->kv_move(cache, kv_type, row_len, src, dst, n);
  }
  void kv_rope_shift(infer::buffer& k, infer::ggml_type kv_type, int64_t first, int64_t n, int64_t n_head_kv,
                     int64_t head_dim, int64_t delta, const infer::rope_params& rp) override {
    in_->kv_rope_shift(k, kv_type, first, n, n_head_kv, head_dim, delta, rp);
  }
  void set_interrupt(const qf::cancel_token* t) override { in_->set_interrupt(t); }

 private:
  fault f_;
  std::unique_ptr<infer::backend> in_;
};

}  // namespace qf::test
