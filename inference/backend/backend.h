// The compute backend interface: where weights live and how the forward pass's
// coarse ops run. The architecture files (inference/model/arch_*.cpp) call
// these ops top to bottom; the CPU backend (cpu_backend.cpp) implements them
// with the SIMD kernels and the thread pool, a CUDA backend with device
// kernels.
//
// Memory model, meant to fit device memory:
//  - A `weight` is a matrix W[rows][cols] uploaded once, in its GGUF type
//    (quantized), with upload_weight(). On host backends the source bytes (the
//    GGUF mapping) must outlive the weight, as they may be used in place,
//    unless the weight says it owns a copy (weight::owns_copy).
//  - A `buffer` is raw backend memory (f32 activations, int32 token ids and
//    positions, the KV cache). The host reads or writes it only through
//    upload() / download(); ops never receive host pointers.
//  - Ops may run asynchronously (in order); download() waits for them, and
//    synchronize() waits without copying.
//  - An `f32_ref` names elements [offset, ...) of a buffer viewed as f32.
//  - Element-wise ops (add, swiglu, geglu, gelu, add_bias) allow `out` to alias an input.
//
// Layouts: activations are row-major [n_tokens][width]. A KV cache buffer of
// one layer is [n_cells][n_head_kv][head_dim] in kv_type (f16 or f32); a
// sequence's position p is cell p, or, paged, the cell its block table names
// (kv_table). Attention for token t of a batch whose first token sits at
// position pos0 reads positions [0, pos0 + t] (causal), query head h using KV
// head h / (n_head / n_head_kv) (grouped-query attention).
//
// Step graphs (caps().step_graphs): a backend may record the ops of one
// forward step once and replay them as a unit (CUDA graphs), which removes
// the per-op launch cost of a decode step. A replay reuses the arguments given
// at capture, so everything that changes from step to step must reach the ops
// through buffers: token ids, positions (`pos`, which kv_store and attention
// also read), never host values.
//
// A backend is driven by one thread at a time.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <memory>
#include <string>
#include <vector>

#include "inference/backend/rope.h"
#include "inference/core/cancellation.h"
#include "inference/core/ggml_types.h"

namespace qf::infer {

class buffer {
 public:
  virtual ~buffer() = default;
  size_t size() const { return size_; }  // bytes

 protected:
  explicit buffer(size_t size) : size_(size) {}

 private:
  size_t size_;
};
using buffer_ptr = std::unique_ptr<buffer>;

// W[rows][cols] in a GGUF type, resident on the backend.
class weight {
 public:
  virtual ~weight() = default;
  ggml_type type() const { return type_; }
  int64_t rows() const { return rows_; }
  int64_t cols() const { return cols_; }
  // True once the weight holds a copy of its own and no longer reads the
  // bytes given to upload_weight (the loader may then free them).
  virtual bool owns_copy() const { return false; }

 protected:
  weight(ggml_type t, int64_t rows, int64_t cols) : type_(t), rows_(rows), cols_(cols) {}

 private:
  ggml_type type_;
  int64_t rows_, cols_;
};
using weight_ptr = std::unique_ptr<weight>;

// f32 elements [offset, ...) of a buffer.
struct f32_ref {
  buffer* buf = nullptr;
  int64_t offset = 0;
  f32_ref() = default;
  f32_ref(buffer& b, int64_t off = 0) : buf(&b), offset(off) {}  // NOLINT: implicit on purpose
};

// One product of matmul_many: y = W x.
struct matmul_out {
  const weight* w = nullptr;
  f32_ref y;
};

// How one sequence's positions map to the cells of a KV cache buffer. No
// table: position p is cell p (a contiguous cache). Paged: the buffer is a
// pool of blocks of block_cells cells each (a power of two), and position p
// is row p % block_cells of block blocks[p / block_cells]; `blocks` holds the
// sequence's block ids (int32 [at least (last position / block_cells) + 1]),
// read when the op runs, so a replayed step graph follows a table that grew.
struct kv_table {
  const buffer* blocks = nullptr;
  int64_t block_cells = 0;
};

struct attention_params {
  int64_t n_tokens = 0;   // query rows
  int64_t pos0 = 0;       // position of query row 0; row t attends cells [0, pos0 + t]
  int64_t n_head = 0;
  int64_t n_head_kv = 0;  // divides n_head
  int64_t head_dim = 0;
  float scale = 1;        // usually 1 / sqrt(head_dim)
  ggml_type kv_type = ggml_type::f16;
  // Positions of the query rows (int32 [n_tokens], consecutive). When set,
  // ops read row 0's position from it when they run, and pos0 is only the
  // value at the time of the call (a replayed step graph keeps that value).
  const buffer* pos = nullptr;
  kv_table table{};  // where the sequence's cells lie in k_cache / v_cache
};

struct backend_caps {
  bool host_memory = false;    // buffers are plain host memory
  bool kv_f32 = false;         // can keep the KV cache in f32
  bool step_graphs = false;    // capture() / replay() work
  int n_threads = 1;           // CPU threads used (1 for device backends)
};

// A recorded forward step (see "Step graphs" above); owned by its context.
class step_graph {
 public:
  virtual ~step_graph() = default;
};
using step_graph_ptr = std::unique_ptr<step_graph>;

class backend {
 public:
  virtual ~backend() = default;

  virtual std::string name() const = 0;      // "cpu" | "cuda"
  virtual std::string describe() const = 0;  // "cpu (AVX-512, 2 threads)"
  virtual backend_caps caps() const = 0;
  virtual bool supports_weight_type(ggml_type t) const = 0;

  // ---- memory ----
  virtual weight_ptr upload_weight(ggml_type type, int64_t rows, int64_t cols, const uint8_t* data) = 0;
  virtual buffer_ptr alloc(size_t bytes) = 0;  // zero-filled
  virtual void upload(buffer& dst, size_t dst_offset, const void* src, size_t bytes) = 0;
  virtual void download(const buffer& src, size_t src_offset, void* dst, size_t bytes) = 0;
  virtual void synchronize() = 0;
  // dst[dst_offset, +bytes) = src[src_offset, +bytes) (distinct buffers; a
  // sequence's KV cells copied into another's). The default goes through host
  // memory; backends override it with a copy in their own memory.
  virtual void copy(buffer& dst, size_t dst_offset, const buffer& src, size_t src_offset, size_t bytes) {
    std::vector<uint8_t> host(bytes);
    download(src, src_offset, host.data(), bytes);
    upload(dst, dst_offset, host.data(), bytes);
  }
  // A context will attend over up to n_ctx cells with up to n_head query heads:
  // the backend may size its scratch now so that no op allocates later.
  virtual void reserve_attention(int64_t n_ctx, int64_t n_head) {}

  // ---- ops (f32 activations) ----
  // out[i][:] = row ids[i] of the table, dequantized. ids: int32 [n].
  virtual void get_rows(const weight& table, const buffer& ids, int64_t n, f32_ref out) = 0;
  // y[t][r] = sum_c W[r][c] x[t][c];  x [n][cols] -> y [n][rows]. x's offset
  // must be a multiple of 4 elements (device kernels load it 16 bytes at a time).
  virtual void matmul(const weight& w, f32_ref x, int64_t n, f32_ref y) = 0;
  // matmul(*o.w, x, n, o.y) for every o, with the same results: the products
  // of one input (q/k/v, gate/up). A backend may run them as one job.
  virtual void matmul_many(std::initializer_list<matmul_out> outs, f32_ref x, int64_t n) {
    for (const auto& o : outs) matmul(*o.w, x, n, o.y);
  }
  // y[r][:] = x[r][:] / rms(x[r][:]) * w;  w: f32 [n_cols].
  virtual void rms_norm(f32_ref x, const buffer& w, f32_ref y, int64_t n_rows, int64_t n_cols, float eps) = 0;
  // y[r][:] = (x[r][:] - mean) / sqrt(var + eps) * w + b, mean and variance
  // over the row;  w, b: f32 [n_cols], b may be null (no bias).
  virtual void layer_norm(f32_ref x, const buffer& w, const buffer* b, f32_ref y, int64_t n_rows, int64_t n_cols,
                          float eps) = 0;
  // x[r][c] += b[c];  b: f32 [n_cols].
  virtual void add_bias(f32_ref x, const buffer& b, int64_t n_rows, int64_t n_cols) = 0;
  virtual void add(f32_ref a, f32_ref b, f32_ref out, int64_t n) = 0;        // out = a + b
  // A hint that bytes [offset, offset + bytes) of b are used soon (a layer's
  // cached keys and values and its attention output, named right after its
  // q/k/v matmul). Nothing is computed; a backend may ignore it.
  virtual void prefetch(const buffer& b, size_t offset, size_t bytes) { (void)b, (void)offset, (void)bytes; }
  virtual void swiglu(f32_ref gate, f32_ref up, f32_ref out, int64_t n) = 0;  // out = silu(gate) * up
  // GELU with the tanh approximation (ggml_gelu):
  // gelu(x) = 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))).
  virtual void gelu(f32_ref x, f32_ref out, int64_t n) = 0;                  // out = gelu(x)
  virtual void geglu(f32_ref gate, f32_ref up, f32_ref out, int64_t n) = 0;   // out = gelu(gate) * up
  virtual void scale(f32_ref x, float s, int64_t n) = 0;                     // x *= s, in place
  // Rotates x [n_tokens][n_heads][head_dim] in place; pos: int32 [n_tokens].
  virtual void rope(f32_ref x, const buffer& pos, int64_t n_tokens, int64_t n_heads, int64_t head_dim,
                    const rope_params& rp) = 0;

  // out[r] = index of the largest of x[r][0..n_cols) (the lowest on ties);
  // out: int32 [n_rows]. Greedy decoding without copying logits to the host.
  virtual void argmax_rows(f32_ref x, int64_t n_rows, int64_t n_cols, buffer& out) = 0;
  // out[r] = log-probability of the largest of x[r][0..n_cols) under the
  // row's softmax: -log(sum_c exp(x[r][c] - max_c x[r][c])), <= 0; out: f32
  // [n_rows]. With argmax_rows, the score of a greedy token without copying logits.
  virtual void top_logprob_rows(f32_ref x, int64_t n_rows, int64_t n_cols, f32_ref out) = 0;
  // Both of the above over the same rows, with the same results: a backend
  // may share what they have in common (each row's maximum).
  virtual void argmax_logprob_rows(f32_ref x, int64_t n_rows, int64_t n_cols, buffer& best, f32_ref lp) {
    argmax_rows(x, n_rows, n_cols, best);
    top_logprob_rows(x, n_rows, n_cols, lp);
  }

  // ---- KV cache ----
  // Writes src [n_rows][row_len] (f32) as kv_type into the cells of the rows'
  // positions [pos[0], pos[0] + n_rows) (pos[0] read when the op runs), each
  // position's cell found through `table`. Rows outside the cache are an
  // error: host backends throw std::out_of_range, device backends (which
  // cannot throw from a kernel) skip them.
  virtual void kv_store(f32_ref src, int64_t n_rows, int64_t row_len, buffer& cache, ggml_type kv_type,
                        const buffer& pos, const kv_table& table) = 0;
  // Causal GQA attention: q [n_tokens][n_head][head_dim] -> out [n_tokens][n_head][head_dim].
  virtual void attention(f32_ref q, const buffer& k_cache, const buffer& v_cache, f32_ref out,
                         const attention_params& ap) = 0;
  // Copies physical cells [src, src + n) to [dst, dst + n) (overlap allowed).
  virtual void kv_move(buffer& cache, ggml_type kv_type, int64_t row_len, int64_t src, int64_t dst, int64_t n) = 0;
  // Re-rotates keys in physical cells [first, first + n) by `delta` positions.
  virtual void kv_rope_shift(buffer& k_cache, ggml_type kv_type, int64_t first, int64_t n, int64_t n_head_kv,
                             int64_t head_dim, int64_t delta, const rope_params& rp) = 0;

  // ---- interruption ----
  // While `t` is set, long ops may stop part-way once it is cancelled, leaving
  // their outputs undefined: the caller checks t after the ops and discards
  // what they computed. nullptr (the default) runs every op to its end.
  virtual void set_interrupt(const cancel_token* t) {}

  // ---- step graphs (optional, caps().step_graphs) ----
  // Records the ops that `record` enqueues without running them. Returns
  // nullptr when the backend has no graphs or the ops cannot be recorded (the
  // caller then runs them directly); rethrows what `record` throws.
  virtual step_graph_ptr capture(const std::function<void()>& record) { return nullptr; }
  // Runs a recorded step. Returns false, running nothing, when the graph is
  // stale (backend scratch it uses was reallocated since): capture it again.
  virtual bool replay(step_graph& g) { return false; }
};

// The CPU backend (cpu_backend.cpp); n_threads <= 0 picks the hardware concurrency.
// The CUDA backend's factory is in backend/cuda/cuda_backend.h, the choice
// between them in backend_select.h.
std::unique_ptr<backend> make_cpu_backend(int n_threads);

}  // namespace qf::infer
