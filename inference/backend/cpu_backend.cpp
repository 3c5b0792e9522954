// CPU backend ops (see cpu_backend.h). Every op is a thin loop over the
// kernels; the work split is by rows (norms, embeddings, KV rows), by tokens
// (RoPE) or by (token, head) pairs (attention). The matmul kernels split their
// own work. Small ops of a decode step (one row) run on the calling thread:
// waking the pool costs more than they do.
#include "inference/backend/cpu_backend.h"

#include <algorithm>
#include <atomic>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <new>
#include <stdexcept>

#include <sys/mman.h>

#include "inference/backend/cpu/attention.h"

namespace qf::infer {

namespace {
constexpr std::align_val_t k_align{64};
// From this size on a buffer is a mapping of its own (page-aligned, so also
// k_align-aligned), zero without being written.
constexpr size_t k_mapped_min = size_t{256} << 10;

uint8_t* bytes_of(buffer& b) { return static_cast<cpu_buffer&>(b).data(); }
const uint8_t* bytes_of(const buffer& b) { return static_cast<const cpu_buffer&>(b).data(); }
float* f32(f32_ref r) { return reinterpret_cast<float*>(bytes_of(*r.buf)) + r.offset; }
const float* f32c(const buffer& b) { return reinterpret_cast<const float*>(bytes_of(b)); }
const cpu::weight_matrix& mat(const weight& w) { return static_cast<const cpu_weight&>(w).matrix(); }
size_t kv_elem_size(ggml_type t) { return t == ggml_type::f16 ? sizeof(fp16_t) : sizeof(float); }
}  // namespace

cpu_buffer::cpu_buffer(size_t bytes) : buffer(bytes) {
  if (bytes >= k_mapped_min) {
    // Fresh anonymous pages read as zero and are backed on first write.
    void* p = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) throw std::bad_alloc();
    data_ = static_cast<uint8_t*>(p);
    mapped_ = true;
    return;
  }
  data_ = static_cast<uint8_t*>(::operator new(std::max<size_t>(bytes, 1), k_align));
  std::memset(data_, 0, bytes);
}
cpu_buffer::~cpu_buffer() {
  if (mapped_)
    ::munmap(data_, size());
  else
    ::operator delete(data_, k_align);
}

cpu_backend::cpu_backend(int n_threads) : pool_(n_threads), scratch_(pool_.size()) {}

std::unique_ptr<backend> make_cpu_backend(int n_threads) { return std::make_unique<cpu_backend>(n_threads); }

std::string cpu_backend::describe() const {
  const auto& f = cpu::detect_cpu();
  const char* isa = f.avx512f ? (f.avx512vnni ? "AVX-512 VNNI" : "AVX-512") : (f.avx2 && f.fma) ? "AVX2" : "scalar";
  const int n = pool_.size();
  return std::string("cpu (") + isa + ", " + std::to_string(n) + (n == 1 ? " thread)" : " threads)");
}

backend_caps cpu_backend::caps() const {
  backend_caps c;
  c.host_memory = true;
  c.kv_f32 = true;
  c.n_threads = pool_.size();
  return c;
}

bool cpu_backend::supports_weight_type(ggml_type t) const {
  switch (t) {
    case ggml_type::f32: case ggml_type::f16: case ggml_type::bf16: case ggml_type::q8_0:
    case ggml_type::q4_0: case ggml_type::q4_1: case ggml_type::q5_0: case ggml_type::q5_1:
    case ggml_type::q4_k: case ggml_type::q5_k: case ggml_type::q6_k:
      return true;
    default:
      return false;
  }
}

weight_ptr cpu_backend::upload_weight(ggml_type type, int64_t rows, int64_t cols, const uint8_t* data) {
  return std::make_unique<cpu_weight>(cpu::prepare_weight(type, rows, cols, data, &weight_arena_));
}

buffer_ptr cpu_backend::alloc(size_t bytes) { return std::make_unique<cpu_buffer>(bytes); }

void cpu_backend::upload(buffer& dst, size_t off, const void* src, size_t bytes) {
  if (off > dst.size() || bytes > dst.size() - off) throw std::out_of_range("cpu_backend::upload out of bounds");
  std::memcpy(bytes_of(dst) + off, src, bytes);
}

void cpu_backend::download(const buffer& src, size_t off, void* dst, size_t bytes) {
  if (off > src.size() || bytes > src.size() - off) throw std::out_of_range("cpu_backend::download out of bounds");
  std::memcpy(dst, bytes_of(src) + off, bytes);
}

void cpu_backend::copy(buffer& dst, size_t dst_off, const buffer& src, size_t src_off, size_t bytes) {
  if (dst_off > dst.size() || bytes > dst.size() - dst_off || src_off > src.size() || bytes > src.size() - src_off)
    throw std::out_of_range("cpu_backend::copy out of bounds");
  std::memcpy(bytes_of(dst) + dst_off, bytes_of(src) + src_off, bytes);
}

namespace {
// The fewest rows of `row_elems` elements that are worth waking the pool for
// (and at least `min_rows`): a row op over fewer runs on the calling thread.
// A few rows of a batched decode step or a speculative verification are a
// microsecond of work, less than a wake-up of the pool, and far less than
// waiting for a worker the OS has not scheduled (pool runs that split work
// statically wait for every worker): on a loaded 2-core VM, waking it for
// every norm and rope of a 4-row step made the step twice as slow as 3 rows.
int64_t rows_worth_waking(int64_t row_elems, int64_t min_rows) {
  constexpr int64_t k_elems = int64_t{1} << 15;  // as the element-wise ops
  return std::max(min_rows, k_elems / std::max<int64_t>(1, row_elems));
}
}  // namespace

template <class Fn>
void cpu_backend::parallel_for(int64_t n, int64_t min_parallel, const Fn& fn) {
  if (n < min_parallel || pool_.size() == 1) {
    fn(int64_t{0}, n, 0);
    return;
  }
  // One pointer captured: the std::function stays in its small buffer (no allocation).
  const Fn* f = &fn;
  const int64_t* pn = &n;
  pool_.run([f, pn](int ith, int nth) {
    const int64_t chunk = (*pn + nth - 1) / nth;
    const int64_t b = std::min<int64_t>(*pn, chunk * ith), e = std::min<int64_t>(*pn, b + chunk);
    if (b < e) (*f)(b, e, ith);
  });
}

void cpu_backend::reserve_attention(int64_t n_ctx, int64_t n_head) {
  // attention() needs n_kv * (heads per item) floats per thread; an item never has more than n_head heads.
  for (int i = 0; i < pool_.size(); ++i) scratch(i, static_cast<size_t>(n_ctx) * static_cast<size_t>(n_head));
}

float* cpu_backend::scratch(int ith, size_t n_floats) {
  auto& s = scratch_[ith];
  if (s.size() < n_floats) s.resize(n_floats);
  return s.data();
}

void cpu_backend::get_rows(const weight& table, const buffer& ids_buf, int64_t n, f32_ref out) {
  const cpu::weight_matrix& m = mat(table);
  const int32_t* ids = reinterpret_cast<const int32_t*>(bytes_of(ids_buf));
  float* y = f32(out);
  for (int64_t i = 0; i < n; ++i)  // checked here: workers must not throw
    if (ids[i] < 0 || ids[i] >= m.rows) throw std::out_of_range("get_rows: id out of range");
  parallel_for(n, 8, [&](int64_t b, int64_t e, int) {
    for (int64_t i = b; i < e; ++i) {
      if (m.type == ggml_type::f32)
        std::memcpy(y + i * m.cols, m.data + static_cast<size_t>(ids[i]) * m.row_bytes, m.cols * sizeof(float));
      else
        cpu::dequantize_weight_row(m, ids[i], y + i * m.cols);
    }
  });
}

void cpu_backend::matmul(const weight& w, f32_ref x, int64_t n, f32_ref y) {
  cpu::matmul(pool_, mat(w), f32(x), n, f32(y), interrupt_, &order_);
}

void cpu_backend::matmul_many(std::initializer_list<matmul_out> outs, f32_ref x, int64_t n) {
  constexpr size_t k_max = 8;  // q/k/v needs three
  if (outs.size() > k_max) return backend::matmul_many(outs, x, n);
  const cpu::weight_matrix* ws[k_max];
  float* ys[k_max];
  size_t i = 0;
  for (const auto& o : outs) ws[i] = &mat(*o.w), ys[i] = f32(o.y), ++i;
  cpu::matmul_many(pool_, std::span(ws, i), f32(x), n, std::span(ys, i), interrupt_, &order_);
}

// A decode step ends with the greedy pick and its log-probability over a
// vocabulary-long row. Both cut the row in chunks of cpu::k_logprob_chunk
// columns that the pool shares, and combine the chunks' results in chunk
// order, so the answer does not depend on the thread count and equals the
// one-thread scan's and cpu::top_logprob's bit for bit. For 151,936 columns
// on a Zen 4 core: the pick 34.7 us -> 6.1 (one thread; the scalar search
// for the maximum's column now covers one chunk) and 3.4 (two), the
// log-probability 71 us on one thread, 36.5 on two (cpu::top_logprob on one
// thread: 70.9-77.5 us, 61.5-61.8 once the chunks' exps were summed without
// copying each chunk to the stack to write them).
float cpu_backend::chunk_maxes(const float* row, int64_t n) {
  constexpr int64_t k = cpu::k_logprob_chunk;
  const int64_t nc = (n + k - 1) / k;
  chunk_max_.resize(static_cast<size_t>(nc));
  parallel_for(nc, 16, [&](int64_t b, int64_t e, int) {
    for (int64_t c = b; c < e; ++c) chunk_max_[c] = cpu::max_value(row + c * k, std::min(k, n - c * k));
  });
  float max = -std::numeric_limits<float>::infinity();
  for (float m : chunk_max_) max = std::max(max, m);  // a chunk maximum is never NaN
  return max;
}

// Row `row`'s pick into *best and its log-probability into *lp, either
// pointer null to skip it. The pick is the first column holding the largest
// value, as a scan keeping the first strict maximum gives (a NaN in column
// 0 is kept, as that scan would; no columns pick 0); its search starts in
// the first chunk whose maximum it is: no column before that chunk can hold
// it. Both share one pass for the chunk maxima.
void cpu_backend::pick_row(const float* row, int64_t n, int32_t* best, float* lp) {
  constexpr int64_t k = cpu::k_logprob_chunk;
  const bool nan_first = n > 0 && std::isnan(row[0]);
  if (n <= 0 || (nan_first && !lp)) {
    if (best) *best = 0;
    if (lp) *lp = cpu::top_logprob(row, n);  // NaN for no columns
    return;
  }
  const float max = chunk_maxes(row, n);
  if (best) {
    size_t c = 0;
    while (c + 1 < chunk_max_.size() && chunk_max_[c] != max) ++c;
    int64_t b = static_cast<int64_t>(c) * k;
    while (b < n - 1 && row[b] != max) ++b;
    *best = nan_first ? 0 : static_cast<int32_t>(b);
  }
  if (!lp) return;
  if (max == -std::numeric_limits<float>::infinity()) {
    *lp = cpu::top_logprob(row, n);  // -log(n): all are -inf
    return;
  }
  const auto nc = static_cast<int64_t>(chunk_max_.size());  // as chunk_maxes cut the row
  chunk_sum_.resize(chunk_max_.size());
  parallel_for(nc, 16, [&](int64_t b, int64_t e, int) {
    for (int64_t c = b; c < e; ++c) chunk_sum_[c] = cpu::exp_sum_chunk(row + c * k, max, std::min(k, n - c * k));
  });
  double sum = 0;
  for (float s : chunk_sum_) sum += s;
  *lp = static_cast<float>(-std::log(sum));
}

void cpu_backend::argmax_rows(f32_ref x, int64_t n_rows, int64_t n_cols, buffer& out) {
  const float* xs = f32(x);
  int32_t* o = reinterpret_cast<int32_t*>(bytes_of(out));
  for (int64_t r = 0; r < n_rows; ++r) pick_row(xs + r * n_cols, n_cols, o + r, nullptr);
}

void cpu_backend::top_logprob_rows(f32_ref x, int64_t n_rows, int64_t n_cols, f32_ref out) {
  const float* xs = f32(x);
  float* o = f32(out);
  for (int64_t r = 0; r < n_rows; ++r) pick_row(xs + r * n_cols, n_cols, nullptr, o + r);
}

// Both at once: one pass for the chunk maxima instead of two (151,936
// logits on a Zen 4 core: 67.3-67.8 -> 62.0-62.2 us on one thread,
// 37.1-37.9 -> 33.6-34.0 on two, warm).
void cpu_backend::argmax_logprob_rows(f32_ref x, int64_t n_rows, int64_t n_cols, buffer& best, f32_ref lp) {
  const float* xs = f32(x);
  int32_t* ob = reinterpret_cast<int32_t*>(bytes_of(best));
  float* ol = f32(lp);
  for (int64_t r = 0; r < n_rows; ++r) pick_row(xs + r * n_cols, n_cols, ob + r, ol + r);
}

void cpu_backend::rms_norm(f32_ref x, const buffer& w, f32_ref y, int64_t n_rows, int64_t n_cols, float eps) {
  const float* xs = f32(x);
  const float* ws = f32c(w);
  float* ys = f32(y);
  parallel_for(n_rows, rows_worth_waking(n_cols, 4), [&](int64_t b, int64_t e, int) {
    for (int64_t r = b; r < e; ++r) cpu::rms_norm(xs + r * n_cols, ws, ys + r * n_cols, n_cols, eps);
  });
}

void cpu_backend::layer_norm(f32_ref x, const buffer& w, const buffer* b, f32_ref y, int64_t n_rows, int64_t n_cols,
                             float eps) {
  const float* xs = f32(x);
  const float* ws = f32c(w);
  const float* bs = b ? f32c(*b) : nullptr;
  float* ys = f32(y);
  parallel_for(n_rows, rows_worth_waking(n_cols, 4), [&](int64_t rb, int64_t re, int) {
    for (int64_t r = rb; r < re; ++r) cpu::layer_norm(xs + r * n_cols, ws, bs, ys + r * n_cols, n_cols, eps);
  });
}

void cpu_backend::add_bias(f32_ref x, const buffer& b, int64_t n_rows, int64_t n_cols) {
  float* xs = f32(x);
  const float* bs = f32c(b);
  parallel_for(n_rows, rows_worth_waking(n_cols, 8), [&](int64_t rb, int64_t re, int) {
    for (int64_t r = rb; r < re; ++r) cpu::add(xs + r * n_cols, bs, xs + r * n_cols, n_cols);
  });
}

void cpu_backend::add(f32_ref a, f32_ref b, f32_ref out, int64_t n) {
  const float* as = f32(a);
  const float* bs = f32(b);
  float* os = f32(out);
  parallel_for(n, 1 << 16, [&](int64_t s, int64_t e, int) { cpu::add(as + s, bs + s, os + s, e - s); });
}

// Up to 64 KiB asked for into L2, all at once. A decode step's attention
// otherwise meets its cache rows one miss after another: named right after
// the q/k/v matmul (prefetch_attention), the attention over about 30 cells
// went from 7.3-7.5 to 4.1-4.2 us a layer in place (0.5B Q8_0; 1.5B:
// 10.0-11.8 to 6.4-8.0) and each KV store from 0.55-1.1 to 0.10-0.27 us,
// on two threads of a Zen 4 core. Beyond 64 KiB the attention kernels ask
// ahead for the rows themselves.
void cpu_backend::prefetch(const buffer& b, size_t offset, size_t bytes) {
  if (offset >= b.size()) return;
  const char* p = reinterpret_cast<const char*>(bytes_of(b)) + offset;
  const size_t n = std::min({bytes, b.size() - offset, size_t{64} << 10});
  for (size_t o = 0; o < n; o += 64) __builtin_prefetch(p + o, 0, 2);  // prefetcht1: into L2
}

void cpu_backend::swiglu(f32_ref gate, f32_ref up, f32_ref out, int64_t n) {
  const float* g = f32(gate);
  const float* u = f32(up);
  float* o = f32(out);
  parallel_for(n, 1 << 15, [&](int64_t s, int64_t e, int) { cpu::silu_mul(g + s, u + s, o + s, e - s); });
}

void cpu_backend::gelu(f32_ref x, f32_ref out, int64_t n) {
  const float* xs = f32(x);
  float* o = f32(out);
  parallel_for(n, 1 << 15, [&](int64_t s, int64_t e, int) { cpu::gelu_mul(xs + s, nullptr, o + s, e - s); });
}

void cpu_backend::geglu(f32_ref gate, f32_ref up, f32_ref out, int64_t n) {
  const float* g = f32(gate);
  const float* u = f32(up);
  float* o = f32(out);
  parallel_for(n, 1 << 15, [&](int64_t s, int64_t e, int) { cpu::gelu_mul(g + s, u + s, o + s, e - s); });
}

void cpu_backend::scale(f32_ref x, float s, int64_t n) {
  float* xs = f32(x);
  parallel_for(n, 1 << 16, [&](int64_t b, int64_t e, int) { cpu::scale(xs + b, s, e - b); });
}

void cpu_backend::rope(f32_ref x, const buffer& pos_buf, int64_t n_tokens, int64_t n_heads, int64_t head_dim,
                       const rope_params& rp) {
  float* xs = f32(x);
  const int32_t* pos = reinterpret_cast<const int32_t*>(bytes_of(pos_buf));
  const float* factors = rp.freq_factors ? f32c(*rp.freq_factors) : nullptr;
  const float* cs = rope_table(pos, n_tokens, rp, factors);  // [n_tokens][n_rot/2][cos, sin]
  parallel_for(n_tokens, rows_worth_waking(n_heads * head_dim, 4), [&](int64_t b, int64_t e, int) {
    for (int64_t t = b; t < e; ++t) rope_apply(xs + t * n_heads * head_dim, n_heads, head_dim, cs + t * rp.n_rot, rp);
  });
}

// Every layer rotates q and k at the same positions with the same parameters,
// so a forward pass builds the table on its first call and the other 2 x
// n_layer - 1 calls reuse it. Each pair costs a powf, a cos and a sin: for a
// 0.5B decode step that was 1,536 of each (48 calls of 32 pairs).
const float* cpu_backend::rope_table(const int32_t* pos, int64_t n_tokens, const rope_params& rp,
                                     const float* factors) {
  rope_table_key& k = rope_key_;
  const bool same = k.valid && k.params == rp && k.factors == factors &&
                    k.pos.size() == static_cast<size_t>(n_tokens) && std::equal(pos, pos + n_tokens, k.pos.begin());
  if (!same) {
    k.valid = false;  // until the table is whole
    k.pos.assign(pos, pos + n_tokens);
    k.params = rp;
    k.factors = factors;
    rope_cs_.resize(static_cast<size_t>(n_tokens * rp.n_rot));
    parallel_for(n_tokens, 4, [&](int64_t b, int64_t e, int) {
      for (int64_t t = b; t < e; ++t) rope_cos_sin(pos[t], rp, rope_cs_.data() + t * rp.n_rot, factors);
    });
    k.valid = true;
  }
  return rope_cs_.data();
}

void cpu_backend::kv_store(f32_ref src, int64_t n_rows, int64_t row_len, buffer& cache, ggml_type kv_type,
                           const buffer& pos, const kv_table& table) {
  const size_t es = kv_elem_size(kv_type);
  const int64_t first = reinterpret_cast<const int32_t*>(bytes_of(pos))[0];
  const size_t n_cells = cache.size() / (static_cast<size_t>(row_len) * es);
  const float* s = f32(src);
  if (!table.blocks) {
    if (first < 0 || static_cast<size_t>(first + n_rows) > n_cells) throw std::out_of_range("kv_store beyond the cache");
    uint8_t* base = bytes_of(cache) + static_cast<size_t>(first) * row_len * es;
    if (kv_type == ggml_type::f32) {
      std::memcpy(base, s, static_cast<size_t>(n_rows) * row_len * sizeof(float));
      return;
    }
    fp16_t* d = reinterpret_cast<fp16_t*>(base);
    parallel_for(n_rows, rows_worth_waking(row_len, 16), [&](int64_t b, int64_t e, int) {
      for (int64_t r = b; r < e; ++r) cpu::f32_to_f16_row(s + r * row_len, d + r * row_len, row_len);
    });
    return;
  }
  // Paged: each row to the cell its block table names.
  const int32_t* blocks = reinterpret_cast<const int32_t*>(bytes_of(*table.blocks));
  const int64_t bc = table.block_cells;
  const int64_t n_table = static_cast<int64_t>(table.blocks->size() / sizeof(int32_t));
  if (first < 0 || (first + n_rows - 1) / bc >= n_table) throw std::out_of_range("kv_store beyond the block table");
  for (int64_t r = 0; r < n_rows; ++r) {
    const int64_t cell = int64_t{blocks[(first + r) / bc]} * bc + (first + r) % bc;
    if (cell < 0 || static_cast<size_t>(cell) >= n_cells) throw std::out_of_range("kv_store: a block beyond the cache");
  }
  parallel_for(n_rows, rows_worth_waking(row_len, 16), [&](int64_t b, int64_t e, int) {
    for (int64_t r = b; r < e; ++r) {
      const int64_t cell = int64_t{blocks[(first + r) / bc]} * bc + (first + r) % bc;
      uint8_t* d = bytes_of(cache) + static_cast<size_t>(cell) * row_len * es;
      if (kv_type == ggml_type::f32)
        std::memcpy(d, s + r * row_len, static_cast<size_t>(row_len) * sizeof(float));
      else
        cpu::f32_to_f16_row(s + r * row_len, reinterpret_cast<fp16_t*>(d), row_len);
    }
  });
}

void cpu_backend::attention(f32_ref q, const buffer& k_cache, const buffer& v_cache, f32_ref out,
                            const attention_params& ap_in) {
  attention_params ap = ap_in;
  if (ap.pos) ap.pos0 = reinterpret_cast<const int32_t*>(bytes_of(*ap.pos))[0];  // the position now
  if (ap.table.blocks && ap.n_tokens > 0) {  // every block the rows read must be in the table and the cache
    const int64_t bc = ap.table.block_cells;
    if (bc <= 0 || (bc & (bc - 1)) != 0) throw std::invalid_argument("attention: block_cells must be a power of two");
    const size_t block_bytes = static_cast<size_t>(bc * ap.n_head_kv * ap.head_dim) * kv_elem_size(ap.kv_type);
    const int64_t n_blocks = static_cast<int64_t>(std::min(k_cache.size(), v_cache.size()) / block_bytes);
    const int64_t need = (ap.pos0 + ap.n_tokens - 1) / bc + 1;
    if (need > static_cast<int64_t>(ap.table.blocks->size() / sizeof(int32_t)))
      throw std::out_of_range("attention beyond the block table");
    const int32_t* blocks = reinterpret_cast<const int32_t*>(bytes_of(*ap.table.blocks));
    for (int64_t b = 0; b < need; ++b)
      if (blocks[b] < 0 || blocks[b] >= n_blocks) throw std::out_of_range("attention: a block beyond the cache");
  }
  // Work items are (token, KV head, chunk of the query heads sharing it). A
  // whole group shares each converted K/V row; when there are few items (a
  // decode step) groups are split so that every thread gets work. Threads take
  // items from a shared counter, which balances the causal triangle of a prefill.
  // Small jobs (a decode step at a short context) run on the calling thread:
  // waking the pool would cost more than the work.
  const double flops = 4.0 * static_cast<double>(ap.n_head * ap.head_dim) * static_cast<double>(ap.n_tokens) *
                       static_cast<double>(ap.pos0 + (ap.n_tokens + 1) / 2);
  const int nth = flops < 1.5e6 ? 1 : pool_.size();
  const int64_t group = ap.n_head / ap.n_head_kv;  // query heads per KV head
  const int64_t base = ap.n_tokens * ap.n_head_kv;
  // Items wanted: enough to balance. A decode step's items all cost the
  // same, so one per thread is enough there, and every item that splits a
  // group reads the group's K and V rows again.
  const int64_t target = nth == 1 ? 1 : (ap.n_tokens == 1 ? 1 : 2) * static_cast<int64_t>(nth);
  const int64_t chunks_wanted = base >= target ? 1 : std::min(group, (target + base - 1) / base);
  const int64_t chunk = (group + chunks_wanted - 1) / chunks_wanted;  // heads per item
  const int64_t n_chunks = (group + chunk - 1) / chunk;
  const size_t n_kv_max = static_cast<size_t>(ap.pos0 + ap.n_tokens);
  for (int i = 0; i < pool_.size(); ++i) scratch(i, n_kv_max * chunk);  // grow before the threads start

  struct job {
    const attention_params* ap;
    const float* qs;
    float* os;
    const uint8_t* k;
    const uint8_t* v;
    int64_t group, chunk, n_chunks, n_items;
    std::vector<std::vector<float>>* scratch;
    std::atomic<int64_t> next{0};
  } jb{&ap, f32(q), f32(out), bytes_of(k_cache), bytes_of(v_cache), group, chunk, n_chunks,
       base * n_chunks, &scratch_};
  auto body = [](job& j, int ith) {
    const attention_params& a = *j.ap;
    const int64_t q_stride = a.n_head * a.head_dim, kv_stride = a.n_head_kv * a.head_dim;
    kv_cells cells{kv_stride, nullptr, 0};
    if (a.table.blocks) {
      cells.blocks = reinterpret_cast<const int32_t*>(bytes_of(*a.table.blocks));
      cells.shift = std::countr_zero(static_cast<uint64_t>(a.table.block_cells));
    }
    float* scores = (*j.scratch)[ith].data();
    for (int64_t it = j.next.fetch_add(1); it < j.n_items; it = j.next.fetch_add(1)) {
      const int64_t c = it % j.n_chunks, g = (it / j.n_chunks) % a.n_head_kv, t = it / (j.n_chunks * a.n_head_kv);
      const int64_t h0 = g * j.group + c * j.chunk;                 // first query head of the item
      const int64_t n_q = std::min(j.chunk, (g + 1) * j.group - h0);  // heads in the item
      const int64_t n_kv = a.pos0 + t + 1;                           // causal: cells [0, pos0 + t]
      const float* qh = j.qs + t * q_stride + h0 * a.head_dim;
      float* oh = j.os + t * q_stride + h0 * a.head_dim;
      if (a.kv_type == ggml_type::f16) {
        const fp16_t* k = reinterpret_cast<const fp16_t*>(j.k) + g * a.head_dim;
        const fp16_t* v = reinterpret_cast<const fp16_t*>(j.v) + g * a.head_dim;
        attend_group_f16(qh, n_q, k, v, cells, n_kv, a.head_dim, a.scale, scores, oh);
      } else {
        const float* k = reinterpret_cast<const float*>(j.k) + g * a.head_dim;
        const float* v = reinterpret_cast<const float*>(j.v) + g * a.head_dim;
        attend_group_f32(qh, n_q, k, v, cells, n_kv, a.head_dim, a.scale, scores, oh);
      }
    }
  };
  if (nth == 1 || jb.n_items == 1) {
    body(jb, 0);
    return;
  }
  // Any share may take every item, so a worker the OS has not scheduled yet
  // is skipped rather than waited for (run_dynamic).
  job* pj = &jb;
  pool_.run_dynamic([pj, &body](int ith, int) { body(*pj, ith); });
}

void cpu_backend::kv_move(buffer& cache, ggml_type kv_type, int64_t row_len, int64_t src, int64_t dst, int64_t n) {
  const size_t row_bytes = static_cast<size_t>(row_len) * kv_elem_size(kv_type);
  if (static_cast<size_t>(std::max(src, dst) + n) * row_bytes > cache.size())
    throw std::out_of_range("kv_move beyond the cache");
  uint8_t* base = bytes_of(cache);
  std::memmove(base + dst * row_bytes, base + src * row_bytes, n * row_bytes);
}

void cpu_backend::kv_rope_shift(buffer& k_cache, ggml_type kv_type, int64_t first, int64_t n, int64_t n_head_kv,
                                int64_t head_dim, int64_t delta, const rope_params& rp) {
  const int64_t row_len = n_head_kv * head_dim;
  if (static_cast<size_t>(first + n) * row_len * kv_elem_size(kv_type) > k_cache.size())
    throw std::out_of_range("kv_rope_shift beyond the cache");
  std::vector<float> cs(static_cast<size_t>(rp.n_rot));  // once per shift, not per token
  rope_cos_sin(delta, rp, cs.data(), rp.freq_factors ? f32c(*rp.freq_factors) : nullptr, /*shift=*/true);
  uint8_t* base = bytes_of(k_cache);
  parallel_for(n, 16, [&](int64_t b, int64_t e, int ith) {
    float* row = scratch(ith, row_len);
    for (int64_t c = first + b; c < first + e; ++c) {
      if (kv_type == ggml_type::f16) {
        fp16_t* k = reinterpret_cast<fp16_t*>(base) + c * row_len;
        cpu::f16_to_f32_row(k, row, row_len);
        rope_apply(row, n_head_kv, head_dim, cs.data(), rp);
        cpu::f32_to_f16_row(row, k, row_len);
      } else {
        rope_apply(reinterpret_cast<float*>(base) + c * row_len, n_head_kv, head_dim, cs.data(), rp);
      }
    }
  });
}

}  // namespace qf::infer
