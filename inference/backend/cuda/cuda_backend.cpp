// The CUDA implementation of the backend interface (inference/backend/backend.h).
//
// Weights are copied to the device once, in their GGUF (quantized) form.
// matmul runs the fused dequantize-GEMV kernel for up to 32 tokens (decode,
// speculative verification, a keystroke's few prompt tokens; in launches of
// up to 8) and cuBLAS on an F16 copy of the weight for larger batches
// (prefill); the F16 scratch is sized to the largest weight used so far.
// Every op is queued on one stream; download() and synchronize()
// wait for it. Host<->device copies of up to k_staging_bytes go through a
// pinned staging buffer so that token ids in and logits out are fast copies;
// uploads fill it front to back without waiting for the GPU.
// The KV cache is F16 or F32.
//
// Step graphs: capture() records the ops of a forward step into a CUDA graph
// (cudaStreamBeginCapture), replay() launches it. Ops that need scratch sized
// by the context (attention) size it for the whole cache while recording; if
// it is too small, the recording is abandoned, the scratch grown, and the
// step recorded again. Growing that scratch later makes older graphs stale
// (replay() returns false and the context records them again).
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <bit>
#include <cstring>
#include <stdexcept>
#include <string>

#include <spdlog/spdlog.h>

#include "inference/backend/backend.h"
#include "inference/backend/cuda/cuda_backend.h"
#include "inference/backend/cuda/cuda_ops.h"

namespace qf::infer {
namespace {

namespace cu = qf::infer::cuda;

constexpr size_t k_staging_bytes = 8u << 20;
constexpr int64_t k_gemv_max_batch = 32;  // larger batches go through cuBLAS

class cuda_buffer final : public buffer {
 public:
  cuda_buffer(size_t bytes, cudaStream_t s) : buffer(bytes) {
    cu::check(cudaMalloc(&data_, std::max<size_t>(bytes, 1)), "cudaMalloc (buffer)");
    if (const cudaError_t e = cudaMemsetAsync(data_, 0, bytes, s); e != cudaSuccess) {
      cudaFree(data_);
      cu::check(e, "cudaMemsetAsync");
    }
  }
  ~cuda_buffer() override { cudaFree(data_); }
  uint8_t* data() const { return static_cast<uint8_t*>(data_); }

 private:
  void* data_ = nullptr;
};

class cuda_weight final : public weight {
 public:
  cuda_weight(ggml_type t, int64_t rows, int64_t cols, const uint8_t* host, size_t bytes, cudaStream_t s)
      : weight(t, rows, cols) {
    cu::check(cudaMalloc(&data_, bytes), "cudaMalloc (weight)");
    // On the backend's stream and waited for: a plain cudaMemcpy from pageable
    // memory may return before the copy lands, and the (non-blocking) stream
    // would not wait for it.
    cudaError_t e = cudaMemcpyAsync(data_, host, bytes, cudaMemcpyHostToDevice, s);
    if (e == cudaSuccess) e = cudaStreamSynchronize(s);
    if (e != cudaSuccess) {
      cudaFree(data_);
      cu::check(e, "weight upload");
    }
  }
  ~cuda_weight() override { cudaFree(data_); }
  const void* data() const { return data_; }

 private:
  void* data_ = nullptr;
};

class cuda_step_graph final : public step_graph {
 public:
  cuda_step_graph(cu::graph_exec* g, uint64_t generation) : g_(g), generation_(generation) {}
  ~cuda_step_graph() override { cu::destroy_graph(g_); }
  cu::graph_exec* exec() const { return g_; }
  uint64_t generation() const { return generation_; }

 private:
  cu::graph_exec* g_;
  uint64_t generation_;  // of the backend's graph-visible scratch at capture
};

// Thrown by an op being recorded whose scratch is too small: capture() grows it and records again.
struct scratch_too_small {};

uint8_t* dev(const buffer& b) { return static_cast<const cuda_buffer&>(b).data(); }
size_t kv_elem_size(ggml_type t) {
  if (t == ggml_type::f16) return 2;
  if (t == ggml_type::f32) return 4;
  throw std::invalid_argument("the CUDA backend keeps the KV cache in F16 or F32");
}
int32_t* i32(const buffer& b) { return reinterpret_cast<int32_t*>(dev(b)); }
// log2 of a paged table's block size (0 when the cache is contiguous).
int block_shift(const kv_table& t) {
  if (!t.blocks) return 0;
  if (t.block_cells <= 0 || (t.block_cells & (t.block_cells - 1)) != 0)
    throw std::invalid_argument("cuda: block_cells must be a power of two");
  return std::countr_zero(static_cast<uint64_t>(t.block_cells));
}
float* f32(f32_ref r) { return reinterpret_cast<float*>(dev(*r.buf)) + r.offset; }
const cuda_weight& cw(const weight& w) { return static_cast<const cuda_weight&>(w); }

class cuda_backend final : public backend {
 public:
  cuda_backend() {
    try {
      cu::check(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "cudaStreamCreate");
      if (!cu::create_cublas(&cublas_)) throw std::runtime_error("cuBLAS failed to initialise");
      cu::check(cudaMallocHost(&staging_, k_staging_bytes), "cudaMallocHost (staging)");
    } catch (...) {
      release();
      throw;
    }
  }
  ~cuda_backend() override { release(); }

  std::string name() const override { return "cuda"; }
  std::string describe() const override { return std::string("cuda (") + cu::device_description() + ")"; }
  backend_caps caps() const override {
    return backend_caps{.host_memory = false, .kv_f32 = true, .step_graphs = true, .n_threads = 1};
  }
  bool supports_weight_type(ggml_type t) const override { return cu::gemv_supported(t); }

  weight_ptr upload_weight(ggml_type type, int64_t rows, int64_t cols, const uint8_t* data) override {
    not_capturing("upload_weight");
    const auto rb = row_size(type, cols);
    if (!rb || !supports_weight_type(type)) throw std::invalid_argument("cuda: unsupported weight type or shape");
    if (cols % 32 != 0)  // the kernels walk float rows in 32-element blocks too
      throw std::invalid_argument("cuda: weight rows of " + std::to_string(cols) +
                                  " elements are not supported (a multiple of 32 is)");
    return std::make_unique<cuda_weight>(type, rows, cols, data, *rb * size_t(rows), stream_);
  }
  buffer_ptr alloc(size_t bytes) override {
    not_capturing("alloc");
    return std::make_unique<cuda_buffer>(bytes, stream_);
  }

  void upload(buffer& dst, size_t off, const void* src, size_t bytes) override {
    not_capturing("upload");
    check_range(dst, off, bytes, "upload");
    if (bytes <= k_staging_bytes) {
      // Small uploads (a step's token ids and positions) take the next free
      // part of the pinned buffer without waiting.
      uint8_t* slot = staging_slot(bytes);
      staging_used_ += (bytes + 255) & ~size_t(255);
      std::memcpy(slot, src, bytes);
      cu::check(cudaMemcpyAsync(dev(dst) + off, slot, bytes, cudaMemcpyHostToDevice, stream_), "upload");
    } else {
      cu::check(cudaMemcpyAsync(dev(dst) + off, src, bytes, cudaMemcpyHostToDevice, stream_), "upload");
      cu::check(cudaStreamSynchronize(stream_), "upload sync");
      staging_used_ = 0;
    }
  }
  void download(const buffer& src, size_t off, void* dst, size_t bytes) override {
    not_capturing("download");
    check_range(src, off, bytes, "download");
    if (bytes <= k_staging_bytes) {
      uint8_t* slot = staging_slot(bytes);
      cu::check(cudaMemcpyAsync(slot, dev(src) + off, bytes, cudaMemcpyDeviceToHost, stream_), "download");
      cu::check(cudaStreamSynchronize(stream_), "download sync");
      std::memcpy(dst, slot, bytes);
    } else {
      cu::check(cudaMemcpyAsync(dst, dev(src) + off, bytes, cudaMemcpyDeviceToHost, stream_), "download");
      cu::check(cudaStreamSynchronize(stream_), "download sync");
    }
    staging_used_ = 0;  // the stream is idle: every staged copy is done
  }
  void copy(buffer& dst, size_t dst_off, const buffer& src, size_t src_off, size_t bytes) override {
    not_capturing("copy");
    check_range(dst, dst_off, bytes, "copy");
    check_range(src, src_off, bytes, "copy");
    cu::check(cudaMemcpyAsync(dev(dst) + dst_off, dev(src) + src_off, bytes, cudaMemcpyDeviceToDevice, stream_), "copy");
  }
  void synchronize() override {
    not_capturing("synchronize");
    cu::check(cudaStreamSynchronize(stream_), "cudaStreamSynchronize");
    staging_used_ = 0;
  }

  void get_rows(const weight& table, const buffer& ids, int64_t n, f32_ref out) override {
    check_range(ids, 0, size_t(n) * sizeof(int32_t), "get_rows ids");
    check_f32(out, n * table.cols(), "get_rows");
    cu::get_rows(table.type(), cw(table).data(), table.rows(), table.cols(), i32(ids), n, f32(out), stream_);
  }

  void matmul(const weight& w, f32_ref x, int64_t n, f32_ref y) override {
    check_f32(x, n * w.cols(), "matmul x");
    check_f32(y, n * w.rows(), "matmul y");
    if (x.offset % 4 != 0) throw std::invalid_argument("cuda matmul: x must start at a multiple of 4 elements");
    if (n <= k_gemv_max_batch) {
      // Up to 32 tokens the fused GEMV in launches of 8 (each reads the
      // weight once) beats dequantizing the whole weight for cuBLAS.
      for (int64_t t = 0; t < n; t += 8)
        cu::gemv(w.type(), cw(w).data(), w.rows(), w.cols(), f32(x) + t * w.cols(), std::min<int64_t>(8, n - t),
                 f32(y) + t * w.rows(), stream_);
      return;
    }
    grow(scratch_w_, scratch_w_elems_, size_t(w.rows() * w.cols()));
    grow(scratch_x_, scratch_x_elems_, size_t(n * w.cols()));
    cu::gemm(cublas_, w.type(), cw(w).data(), w.rows(), w.cols(), f32(x), n, f32(y), scratch_w_, scratch_x_,
             stream_);
  }

  void argmax_rows(f32_ref x, int64_t n_rows, int64_t n_cols, buffer& out) override {
    check_range(out, 0, size_t(n_rows) * sizeof(int32_t), "argmax_rows");
    cu::argmax_rows(f32(x), n_rows, n_cols, i32(out), stream_);
  }
  void top_logprob_rows(f32_ref x, int64_t n_rows, int64_t n_cols, f32_ref out) override {
    cu::top_logprob_rows(f32(x), n_rows, n_cols, f32(out), stream_);
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
  void layer_norm(f32_ref x, const buffer& w, const buffer* b, f32_ref y, int64_t n_rows, int64_t n_cols,
                  float eps) override {
    cu::layer_norm(f32(x), reinterpret_cast<const float*>(dev(w)), b ? reinterpret_cast<const float*>(dev(*b)) : nullptr,
                   f32(y), n_rows, n_cols, eps, stream_);
  }
  void gelu(f32_ref x, f32_ref out, int64_t n) override { cu::gelu_mul(f32(x), nullptr, f32(out), n, stream_); }
  void geglu(f32_ref gate, f32_ref up, f32_ref out, int64_t n) override {
    cu::gelu_mul(f32(gate), f32(up), f32(out), n, stream_);
  }
  void scale(f32_ref x, float s, int64_t n) override { cu::scale(f32(x), s, n, stream_); }
  void rope(f32_ref x, const buffer& pos, int64_t n_tokens, int64_t n_heads, int64_t head_dim,
            const rope_params& rp) override {
    cu::rope(f32(x), n_tokens, n_heads, head_dim, rp.n_rot, reinterpret_cast<const int32_t*>(dev(pos)),
             rp.freq_base, rp.freq_scale, factors(rp), rp.style == rope_style::neox, stream_, rp.ext_factor,
             rp.attn_factor, rp.corr_low, rp.corr_high);
  }

  void kv_store(f32_ref src, int64_t n_rows, int64_t row_len, buffer& cache, ggml_type kv_type, const buffer& pos,
                const kv_table& table) override {
    const size_t row_bytes = size_t(row_len) * kv_elem_size(kv_type);
    cu::kv_store(f32(src), n_rows, row_len, dev(cache), kv_type, int64_t(cache.size() / row_bytes), i32(pos),
                 table.blocks ? i32(*table.blocks) : nullptr, block_shift(table), stream_);
  }

  void attention(f32_ref q, const buffer& k_cache, const buffer& v_cache, f32_ref out,
                 const attention_params& ap) override {
    if (capturing_ && !ap.pos)
      throw std::logic_error("cuda: attention without device positions cannot be recorded");
    const int64_t n_cells = int64_t(k_cache.size() / (size_t(ap.n_head_kv * ap.head_dim) * kv_elem_size(ap.kv_type)));
    // Recorded: the position is read on the device and may be anything up to the cache's end.
    // Paged, a position may be anything the block table covers.
    const int64_t n_positions =
        ap.table.blocks ? int64_t(ap.table.blocks->size() / sizeof(int32_t)) * ap.table.block_cells : n_cells;
    const int64_t n_kv_max = capturing_ && ap.pos ? n_positions : ap.pos0 + ap.n_tokens;
    const auto need = size_t(cu::attention_scratch_floats(ap.n_tokens, ap.n_head, ap.head_dim, n_kv_max));
    if (need > attn_scratch_elems_) {
      if (capturing_) {
        attn_scratch_wanted_ = std::max(attn_scratch_wanted_, need);
        throw scratch_too_small{};
      }
      // Doubling: a prefill that grows chunk by chunk reallocates (and makes
      // the recorded graphs stale) only a few times.
      grow(attn_scratch_, attn_scratch_elems_, std::max(need, 2 * attn_scratch_elems_));
      ++generation_;  // recorded graphs point at the old scratch
    }
    cu::attention(f32(q), dev(k_cache), dev(v_cache), ap.kv_type, f32(out), ap.n_tokens, ap.pos0,
                  ap.pos ? i32(*ap.pos) : nullptr, n_kv_max, ap.n_head, ap.n_head_kv, ap.head_dim, ap.scale,
                  attn_scratch_, ap.table.blocks ? i32(*ap.table.blocks) : nullptr, block_shift(ap.table), stream_);
  }

  void kv_move(buffer& cache, ggml_type kv_type, int64_t row_len, int64_t src, int64_t dst, int64_t n) override {
    not_capturing("kv_move");
    const size_t row_bytes = size_t(row_len) * kv_elem_size(kv_type);
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
    not_capturing("kv_rope_shift");
    const int64_t row_len = n_head_kv * head_dim;
    const size_t es = kv_elem_size(kv_type);
    check_range(k_cache, size_t((first + n) * row_len) * es, 0, "kv_rope_shift");
    cu::rope_shift(dev(k_cache) + size_t(first * row_len) * es, kv_type, n, n_head_kv, head_dim, rp.n_rot,
                   int32_t(delta), rp.freq_base, rp.freq_scale, factors(rp), rp.style == rope_style::neox, stream_,
                   rp.ext_factor, rp.corr_low, rp.corr_high);
  }

  step_graph_ptr capture(const std::function<void()>& record) override {
    for (int attempt = 0; attempt < 2; ++attempt) {
      attn_scratch_wanted_ = 0;
      cu::begin_capture(stream_);
      capturing_ = true;
      bool retry = false;
      try {
        record();
      } catch (const scratch_too_small&) {
        retry = true;
      } catch (...) {
        capturing_ = false;
        cu::end_capture(stream_, /*instantiate=*/false, nullptr);
        throw;
      }
      capturing_ = false;
      const char* why = nullptr;
      cu::graph_exec* g = cu::end_capture(stream_, /*instantiate=*/!retry, &why);
      if (retry) {
        grow(attn_scratch_, attn_scratch_elems_, attn_scratch_wanted_);
        ++generation_;
        continue;
      }
      if (!g) {
        spdlog::warn("cuda: recording a step graph failed ({})", why ? why : "unknown error");
        return nullptr;
      }
      try {
        return std::make_unique<cuda_step_graph>(g, generation_);
      } catch (...) {
        cu::destroy_graph(g);
        throw;
      }
    }
    return nullptr;
  }

  bool replay(step_graph& g) override {
    auto& cg = static_cast<cuda_step_graph&>(g);
    if (cg.generation() != generation_) return false;
    cu::launch_graph(cg.exec(), stream_);
    return true;
  }

 private:
  static void check_f32(f32_ref r, int64_t n, const char* what) {
    check_range(*r.buf, size_t(r.offset) * sizeof(float), size_t(n) * sizeof(float), what);
  }
  static void check_range(const buffer& b, size_t off, size_t bytes, const char* what) {
    if (off > b.size() || bytes > b.size() - off) throw std::out_of_range(std::string("cuda ") + what + " out of bounds");
  }
  static const float* factors(const rope_params& rp) {
    return rp.freq_factors ? reinterpret_cast<const float*>(dev(*rp.freq_factors)) : nullptr;
  }
  void release() {
    if (stream_) cudaStreamSynchronize(stream_);
    cu::destroy_cublas(cublas_);
    cudaFree(scratch_w_);
    cudaFree(scratch_x_);
    cudaFree(attn_scratch_);
    if (staging_) cudaFreeHost(staging_);
    if (stream_) cudaStreamDestroy(stream_);
  }
  // The free part of the pinned buffer for `bytes`; when it is full, waits
  // for the queued copies still reading it and starts over.
  uint8_t* staging_slot(size_t bytes) {
    if (staging_used_ + bytes > k_staging_bytes) {
      cu::check(cudaStreamSynchronize(stream_), "sync before staging");
      staging_used_ = 0;
    }
    return static_cast<uint8_t*>(staging_) + staging_used_;
  }
  void not_capturing(const char* what) const {
    if (capturing_) throw std::logic_error(std::string("cuda: ") + what + " while recording a step graph");
  }
  template <typename T>
  void grow(T*& p, size_t& have, size_t need) {
    if (need <= have) return;
    not_capturing("scratch growth");
    cu::check(cudaStreamSynchronize(stream_), "sync before scratch growth");
    staging_used_ = 0;
    cudaFree(p);
    p = nullptr;
    have = 0;
    cu::check(cudaMalloc(&p, need * sizeof(T)), "cudaMalloc (scratch)");
    have = need;
  }

  cudaStream_t stream_ = nullptr;
  cublasContext* cublas_ = nullptr;
  void* staging_ = nullptr;
  size_t staging_used_ = 0;  // bytes of staging_ that queued copies may still read
  uint16_t* scratch_w_ = nullptr;
  size_t scratch_w_elems_ = 0;
  uint16_t* scratch_x_ = nullptr;
  size_t scratch_x_elems_ = 0;
  float* attn_scratch_ = nullptr;
  size_t attn_scratch_elems_ = 0;
  size_t attn_scratch_wanted_ = 0;  // while recording: the size an op asked for
  bool capturing_ = false;
  uint64_t generation_ = 0;         // bumped when graph-visible scratch moves
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
