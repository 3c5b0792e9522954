// The CUDA implementation of the backend interface (inference/backend/backend.h).
//
// Weights are copied to the device once, in their GGUF (quantized) form.
// matmul picks the fused dequantize-GEMV kernel for up to 8 tokens (decode and
// speculative verification) and cuBLAS on an F16 copy of the weight for
// larger batches (prefill); the F16 scratch is sized to the largest weight
// used so far. Every op is queued on one stream; download() and synchronize()
// wait for it. Host<->device copies of up to k_staging_bytes go through a
// pinned staging buffer so that token ids in and logits out are fast copies.
// The KV cache is F16 only (caps().kv_f32 is false).
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <string>

#include "inference/backend/backend.h"
#include "inference/backend/cuda/cuda_ops.h"

namespace qf::infer {
namespace {

namespace cu = qf::infer::cuda;

constexpr size_t k_staging_bytes = 8u << 20;

class cuda_buffer final : public buffer {
 public:
  cuda_buffer(size_t bytes, cudaStream_t s) : buffer(bytes) {
    cu::check(cudaMalloc(&data_, std::max<size_t>(bytes, 1)), "cudaMalloc (buffer)");
    cu::check(cudaMemsetAsync(data_, 0, bytes, s), "cudaMemsetAsync");
  }
  ~cuda_buffer() override { cudaFree(data_); }
  uint8_t* data() const { return static_cast<uint8_t*>(data_); }

 private:
  void* data_ = nullptr;
};

class cuda_weight final : public weight {
 public:
  cuda_weight(ggml_type t, int64_t rows, int64_t cols, const uint8_t* host, size_t bytes) : weight(t, rows, cols) {
    cu::check(cudaMalloc(&data_, bytes), "cudaMalloc (weight)");
    cu::check(cudaMemcpy(data_, host, bytes, cudaMemcpyHostToDevice), "cudaMemcpy (weight upload)");
  }
  ~cuda_weight() override { cudaFree(data_); }
  const void* data() const { return data_; }

 private:
  void* data_ = nullptr;
};

uint8_t* dev(const buffer& b) { return static_cast<const cuda_buffer&>(b).data(); }
float* f32(f32_ref r) { return reinterpret_cast<float*>(dev(*r.buf)) + r.offset; }
const cuda_weight& cw(const weight& w) { return static_cast<const cuda_weight&>(w); }

class cuda_backend final : public backend {
 public:
  cuda_backend() {
    cu::check(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "cudaStreamCreate");
    if (!cu::create_cublas(&cublas_)) throw std::runtime_error("cuBLAS failed to initialise");
    cu::check(cudaMallocHost(&staging_, k_staging_bytes), "cudaMallocHost (staging)");
  }
  ~cuda_backend() override {
    cudaStreamSynchronize(stream_);
    cu::destroy_cublas(cublas_);
    cudaFree(scratch_w_);
    cudaFree(scratch_x_);
    cudaFree(attn_scratch_);
    cudaFreeHost(staging_);
    cudaStreamDestroy(stream_);
  }

  std::string name() const override { return "cuda"; }
  std::string describe() const override { return std::string("cuda (") + cu::device_description() + ")"; }
  backend_caps caps() const override { return backend_caps{false, false, 1}; }
  bool supports_weight_type(ggml_type t) const override { return cu::gemv_supported(t); }

  weight_ptr upload_weight(ggml_type type, int64_t rows, int64_t cols, const uint8_t* data) override {
    const auto rb = row_size(type, cols);
    if (!rb || !supports_weight_type(type)) throw std::invalid_argument("cuda: unsupported weight type or shape");
    return std::make_unique<cuda_weight>(type, rows, cols, data, *rb * size_t(rows));
  }
  buffer_ptr alloc(size_t bytes) override { return std::make_unique<cuda_buffer>(bytes, stream_); }

  void upload(buffer& dst, size_t off, const void* src, size_t bytes) override {
    check_range(dst, off, bytes, "upload");
    if (bytes <= k_staging_bytes) {
      cu::check(cudaStreamSynchronize(stream_), "sync before staging");  // staging may still be in flight
      std::memcpy(staging_, src, bytes);
      cu::check(cudaMemcpyAsync(dev(dst) + off, staging_, bytes, cudaMemcpyHostToDevice, stream_), "upload");
    } else {
      cu::check(cudaMemcpyAsync(dev(dst) + off, src, bytes, cudaMemcpyHostToDevice, stream_), "upload");
      cu::check(cudaStreamSynchronize(stream_), "upload sync");
    }
  }
  void download(const buffer& src, size_t off, void* dst, size_t bytes) override {
    check_range(src, off, bytes, "download");
    if (bytes <= k_staging_bytes) {
      cu::check(cudaMemcpyAsync(staging_, dev(src) + off, bytes, cudaMemcpyDeviceToHost, stream_), "download");
      cu::check(cudaStreamSynchronize(stream_), "download sync");
      std::memcpy(dst, staging_, bytes);
    } else {
      cu::check(cudaMemcpyAsync(dst, dev(src) + off, bytes, cudaMemcpyDeviceToHost, stream_), "download");
      cu::check(cudaStreamSynchronize(stream_), "download sync");
    }
  }
  void synchronize() override { cu::check(cudaStreamSynchronize(stream_), "cudaStreamSynchronize"); }

  void get_rows(const weight& table, const buffer& ids, int64_t n, f32_ref out) override {
    cu::get_rows(table.type(), cw(table).data(), table.cols(), reinterpret_cast<const int32_t*>(dev(ids)), n,
                 f32(out), stream_);
  }

  void matmul(const weight& w, f32_ref x, int64_t n, f32_ref y) override {
    if (n <= 8) {
      cu::gemv(w.type(), cw(w).data(), w.rows(), w.cols(), f32(x), n, f32(y), stream_);
      return;
    }
    grow(scratch_w_, scratch_w_elems_, size_t(w.rows() * w.cols()));
    grow(scratch_x_, scratch_x_elems_, size_t(n * w.cols()));
    cu::gemm(cublas_, w.type(), cw(w).data(), w.rows(), w.cols(), f32(x), n, f32(y), scratch_w_, scratch_x_,
             stream_);
  }

  void rms_norm(f32_ref x, const buffer& w, f32_ref y, int64_t n_rows, int64_t n_cols, float eps) override {
    cu::rms_norm(f32(x), reinterpret_cast<const float*>(dev(w)), f32(y), n_rows, n_cols, eps, stream_);
  }
  void add_bias(f32_ref x, const buffer& b, int64_t n_rows, int64_t n_cols) override {
    cu::add_bias(f32(x), reinterpret_cast<const float*>(dev(b)), n_rows, n_cols, stream_);
  }
  void add(f32_ref a, f32_ref b, f32_ref out, int64_t n) override { cu::add(f32(a), f32(b), f32(out), n, stream_); }
  void swiglu(f32_ref gate, f32_ref up, f32_ref out, int64_t n) override {
    cu::silu_mul(f32(gate), f32(up), f32(out), n, stream_);
  }
  void rope(f32_ref x, const buffer& pos, int64_t n_tokens, int64_t n_heads, int64_t head_dim,
            const rope_params& rp) override {
    cu::rope(f32(x), n_tokens, n_heads, head_dim, rp.n_rot, reinterpret_cast<const int32_t*>(dev(pos)),
             rp.freq_base, rp.freq_scale, factors(rp), rp.style == rope_style::neox, stream_);
  }

  void kv_store(f32_ref src, int64_t n_rows, int64_t row_len, buffer& cache, ggml_type kv_type,
                int64_t first_cell) override {
    require_f16(kv_type);
    check_range(cache, size_t((first_cell + n_rows) * row_len) * 2, 0, "kv_store");
    cu::f32_to_f16(f32(src), reinterpret_cast<uint16_t*>(dev(cache)) + first_cell * row_len, n_rows * row_len,
                   stream_);
  }

  void attention(f32_ref q, const buffer& k_cache, const buffer& v_cache, f32_ref out,
                 const attention_params& ap) override {
    require_f16(ap.kv_type);
    const int64_t n_kv = ap.pos0 + ap.n_tokens;
    grow(attn_scratch_, attn_scratch_elems_,
         size_t(cu::attention_scratch_floats(ap.n_tokens, ap.n_head, ap.head_dim, n_kv)));
    cu::attention(f32(q), reinterpret_cast<const uint16_t*>(dev(k_cache)),
                  reinterpret_cast<const uint16_t*>(dev(v_cache)), f32(out), ap.n_tokens, ap.pos0, ap.n_head,
                  ap.n_head_kv, ap.head_dim, ap.scale, attn_scratch_, stream_);
  }

  void kv_move(buffer& cache, ggml_type kv_type, int64_t row_len, int64_t src, int64_t dst, int64_t n) override {
    require_f16(kv_type);
    const size_t row_bytes = size_t(row_len) * 2;
    check_range(cache, size_t(std::max(src, dst) + n) * row_bytes, 0, "kv_move");
    if (n <= 0 || src == dst) return;
    // Copy in chunks that never overlap their own destination, in the order
    // that keeps unread source cells intact.
    const int64_t gap = src > dst ? src - dst : dst - src;
    for (int64_t done = 0; done < n;) {
      const int64_t c = std::min(gap, n - done);
      const int64_t off = src > dst ? done : n - done - c;
      cu::check(cudaMemcpyAsync(dev(cache) + size_t(dst + off) * row_bytes, dev(cache) + size_t(src + off) * row_bytes,
                                size_t(c) * row_bytes, cudaMemcpyDeviceToDevice, stream_),
                "kv_move");
      done += c;
    }
  }

  void kv_rope_shift(buffer& k_cache, ggml_type kv_type, int64_t first, int64_t n, int64_t n_head_kv,
                     int64_t head_dim, int64_t delta, const rope_params& rp) override {
    require_f16(kv_type);
    const int64_t row_len = n_head_kv * head_dim;
    check_range(k_cache, size_t((first + n) * row_len) * 2, 0, "kv_rope_shift");
    cu::rope_shift_f16(reinterpret_cast<uint16_t*>(dev(k_cache)) + first * row_len, n, n_head_kv, head_dim,
                       rp.n_rot, int32_t(delta), rp.freq_base, rp.freq_scale, factors(rp),
                       rp.style == rope_style::neox, stream_);
  }

 private:
  static void check_range(const buffer& b, size_t off, size_t bytes, const char* what) {
    if (off > b.size() || bytes > b.size() - off) throw std::out_of_range(std::string("cuda ") + what + " out of bounds");
  }
  static const float* factors(const rope_params& rp) {
    return rp.freq_factors ? reinterpret_cast<const float*>(dev(*rp.freq_factors)) : nullptr;
  }
  static void require_f16(ggml_type t) {
    if (t != ggml_type::f16) throw std::invalid_argument("the CUDA backend keeps the KV cache in F16 only");
  }
  template <typename T>
  void grow(T*& p, size_t& have, size_t need) {
    if (need <= have) return;
    cu::check(cudaStreamSynchronize(stream_), "sync before scratch growth");
    cudaFree(p);
    p = nullptr;
    cu::check(cudaMalloc(&p, need * sizeof(T)), "cudaMalloc (scratch)");
    have = need;
  }

  cudaStream_t stream_ = nullptr;
  cublasContext* cublas_ = nullptr;
  void* staging_ = nullptr;
  uint16_t* scratch_w_ = nullptr;
  size_t scratch_w_elems_ = 0;
  uint16_t* scratch_x_ = nullptr;
  size_t scratch_x_elems_ = 0;
  float* attn_scratch_ = nullptr;
  size_t attn_scratch_elems_ = 0;
};

}  // namespace

std::unique_ptr<backend> make_cuda_backend(std::string* why_not) {
  if (cu::device_count() == 0) {
    if (why_not) *why_not = "no CUDA device or driver found";
    return nullptr;
  }
  try {
    return std::make_unique<cuda_backend>();
  } catch (const std::exception& e) {
    if (why_not) *why_not = std::string("CUDA backend failed to start: ") + e.what();
    return nullptr;
  }
}

}  // namespace qf::infer
