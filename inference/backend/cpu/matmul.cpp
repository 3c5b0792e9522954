// Weight preparation and the two matmul paths.
//
// Four weight types are rearranged at load time into a copy the weight
// owns: Q8_0, Q5_0, Q4_K and Q6_K rows sixteen at a time into interleaved
// groups (repack_q8_0.h, repack_q5_0x16.h, repack_q4_k.h, repack_q6_k.h),
// whose kernels compute the sixteen rows together; a Q5_0 weight of fewer
// than sixteen rows has its rows regrouped eight blocks at a time instead
// (repack_q5_0.h). The row loops below see a weight as rows in groups
// of sixteen followed by rows taken one at a time (row_reader).
//
// Decode (one token): the activation is quantized once, then each thread
// streams its own contiguous run of row pieces and helps the others with
// theirs when done (see gemv_part; robust when a core is shared with other
// work); each row is one streaming dot product: the whole cost is reading
// the weights once, so this path is bound by memory bandwidth. matmul_many
// runs several matrices of one input as one such job. With a gemv_order,
// the workers then read ahead the start of their runs of the job that came
// next last time, while the caller runs the serial ops in between.
// Prefill (many tokens): activations are quantized in parallel, then each
// thread takes blocks of rows small enough to stay in L2 and sweeps all tokens
// over them in tiles of k_max_tile, so every weight block is loaded from memory
// once per row block and reused from L1 for several tokens.
#include <algorithm>
#include <array>
#include <atomic>
#include <memory>
#include <new>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include <unistd.h>

#include "inference/backend/cpu/kernels.h"
#include "inference/backend/cpu/ops.h"
#include "inference/backend/cpu/quants.h"
#include "inference/backend/cpu/repack_q4_k.h"
#include "inference/backend/cpu/repack_q5_0.h"
#include "inference/backend/cpu/repack_q5_0x16.h"
#include "inference/backend/cpu/repack_q6_k.h"
#include "inference/backend/cpu/repack_q8_0.h"

namespace qf::infer::cpu {
namespace {

enum class act_kind { f32, q8_0, q8_k };

act_kind act_kind_of(ggml_type t) {
  switch (t) {
    case ggml_type::q8_0: case ggml_type::q4_0: case ggml_type::q4_1: case ggml_type::q5_0: case ggml_type::q5_1:
      return act_kind::q8_0;
    case ggml_type::q4_k: case ggml_type::q5_k: case ggml_type::q6_k: return act_kind::q8_k;
    default: return act_kind::f32;
  }
}

size_t act_bytes(act_kind k, int64_t cols) {
  switch (k) {
    case act_kind::q8_0: return detail::act_q8_0_bytes(cols);
    case act_kind::q8_k: return detail::act_q8_k_bytes(cols);
    default: return static_cast<size_t>(cols) * sizeof(float);
  }
}

void quantize_act(act_kind k, const float* x, uint8_t* dst, int64_t cols) {
  const auto& kt = detail::active_kernels();
  if (k == act_kind::q8_0) kt.quantize_act_q8_0(x, dst, cols);
  else kt.quantize_act_q8_k(x, dst, cols);
}

// Weight types whose rows are interleaved sixteen at a time (a group
// kernel computes the sixteen rows together), with the functions of their
// layout.
struct group_format {
  ggml_type type;
  int64_t block_cols;  // columns of one block
  size_t block_bytes;  // one block of sixteen rows
  void (*repack)(const uint8_t* src, size_t row_bytes, uint8_t* dst, int64_t nb);
  void (*dequantize)(const uint8_t* group, int r, float* y, int64_t n);
  detail::group_dot_fn detail::kernel_table::*dot;
};
constexpr int64_t k_group_rows = detail::k_q4_kx16_rows;
static_assert(detail::k_q6_kx16_rows == k_group_rows && detail::k_q8_0x16_rows == k_group_rows &&
              detail::k_q5_0x16_rows == k_group_rows);

const group_format k_group_formats[] = {
    {ggml_type::q8_0, qk8_0, sizeof(detail::block_q8_0x16),
     [](const uint8_t* src, size_t rb, uint8_t* dst, int64_t nb) {
       detail::repack_rows_q8_0x16(src, rb, reinterpret_cast<detail::block_q8_0x16*>(dst), nb);
     },
     [](const uint8_t* g, int r, float* y, int64_t n) {
       detail::dequantize_row_q8_0x16(reinterpret_cast<const detail::block_q8_0x16*>(g), r, y, n);
     },
     &detail::kernel_table::dot_q8_0x16},
    {ggml_type::q5_0, qk5_0, sizeof(detail::block_q5_0x16),
     [](const uint8_t* src, size_t rb, uint8_t* dst, int64_t nb) {
       detail::repack_rows_q5_0x16(src, rb, reinterpret_cast<detail::block_q5_0x16*>(dst), nb);
     },
     [](const uint8_t* g, int r, float* y, int64_t n) {
       detail::dequantize_row_q5_0x16(reinterpret_cast<const detail::block_q5_0x16*>(g), r, y, n);
     },
     &detail::kernel_table::dot_q5_0x16},
    {ggml_type::q4_k, qk_k, sizeof(detail::block_q4_kx16),
     [](const uint8_t* src, size_t rb, uint8_t* dst, int64_t nb) {
       detail::repack_rows_q4_kx16(src, rb, reinterpret_cast<detail::block_q4_kx16*>(dst), nb);
     },
     [](const uint8_t* g, int r, float* y, int64_t n) {
       detail::dequantize_row_q4_kx16(reinterpret_cast<const detail::block_q4_kx16*>(g), r, y, n);
     },
     &detail::kernel_table::dot_q4_kx16},
    {ggml_type::q6_k, qk_k, sizeof(detail::block_q6_kx16),
     [](const uint8_t* src, size_t rb, uint8_t* dst, int64_t nb) {
       detail::repack_rows_q6_kx16(src, rb, reinterpret_cast<detail::block_q6_kx16*>(dst), nb);
     },
     [](const uint8_t* g, int r, float* y, int64_t n) {
       detail::dequantize_row_q6_kx16(reinterpret_cast<const detail::block_q6_kx16*>(g), r, y, n);
     },
     &detail::kernel_table::dot_q6_kx16},
};

const group_format* group_format_of(ggml_type t) {
  for (const auto& f : k_group_formats)
    if (f.type == t) return &f;
  return nullptr;
}

int64_t row_groups(int64_t rows) { return rows / k_group_rows; }

enum class layout { plain, q5_0x8, grouped };
layout layout_of(const weight_matrix& w) {
  if (!w.repacked) return layout::plain;
  return row_groups(w.rows) > 0 ? layout::grouped : layout::q5_0x8;
}
size_t group_bytes_of(const group_format& f, int64_t cols) {
  return static_cast<size_t>(cols / f.block_cols) * f.block_bytes;
}

// What the row loops read: rows [0, grouped) in interleaved groups of
// sixteen (a group kernel), the rest one by one (a row kernel).
struct row_reader {
  detail::group_dot_fn group_dot = nullptr;
  const uint8_t* groups = nullptr;
  size_t group_bytes = 0;
  int64_t grouped = 0;
  detail::row_dot_fn dot = nullptr;
  const uint8_t* rows = nullptr;  // row grouped + i at rows + i * row_bytes
  size_t row_bytes = 0;

  int64_t unit() const { return group_dot ? k_group_rows : 1; }
  // Where row r starts (r a multiple of unit() below grouped); r == the row
  // count gives the end of the last row.
  const uint8_t* addr(int64_t r) const {
    return r < grouped ? groups + (r / k_group_rows) * group_bytes : rows + (r - grouped) * row_bytes;
  }
  // Rows [r0, r1), r0 a multiple of unit(), against nt <= k_max_tile tokens:
  // row r of token t into out[t * os + r].
  void run(int64_t cols, int64_t r0, int64_t r1, const uint8_t* acts, size_t stride, int nt, float* out,
           int64_t os) const {
    int64_t r = r0;
    for (const int64_t g1 = std::min(r1, grouped); r < g1; r += k_group_rows)
      group_dot(cols, addr(r), acts, stride, nt, out + r, os);
    float tmp[detail::k_max_tile];
    for (; r < r1; ++r) {
      dot(cols, addr(r), acts, stride, nt, tmp);
      for (int t = 0; t < nt; ++t) out[t * os + r] = tmp[t];
    }
  }
};

row_reader reader_of(const weight_matrix& w, const detail::kernel_table& kt) {
  row_reader rd;
  rd.row_bytes = w.row_bytes;
  switch (layout_of(w)) {
    case layout::plain: rd.dot = detail::row_dot_for(kt, w.type), rd.rows = w.data; break;
    case layout::q5_0x8: rd.dot = kt.dot_q5_0x8, rd.rows = static_cast<const uint8_t*>(w.repacked.get()); break;
    case layout::grouped: {
      const group_format& f = *group_format_of(w.type);
      rd.group_dot = kt.*f.dot;
      rd.groups = static_cast<const uint8_t*>(w.repacked.get());
      rd.group_bytes = group_bytes_of(f, w.cols);
      rd.grouped = row_groups(w.rows) * k_group_rows;
      rd.dot = detail::row_dot_for(kt, w.type);
      rd.rows = rd.groups + static_cast<size_t>(row_groups(w.rows)) * rd.group_bytes;
      break;
    }
  }
  return rd;
}

std::vector<uint8_t>& scratch() {
  thread_local std::vector<uint8_t> buf;
  return buf;
}

}  // namespace

weight_matrix prepare_weight(ggml_type type, int64_t rows, int64_t cols, const uint8_t* data, huge_arena* arena) {
  if (!detail::row_dot_for(detail::scalar_kernels(), type))
    throw std::invalid_argument("matmul: unsupported weight type " + std::string(traits(type).name) +
                                " (supported: " + std::string(supported_type_names()) + ")");
  auto rs = row_size(type, cols);
  if (!rs || rows < 0)
    throw std::invalid_argument("matmul: row length " + std::to_string(cols) + " does not fit " +
                                std::string(traits(type).name) + " blocks");
  weight_matrix w;
  w.type = type;
  w.rows = rows;
  w.cols = cols;
  w.data = data;
  w.row_bytes = *rs;
  // Q8_0, Q5_0, Q4_K and Q6_K weights of sixteen rows or more are
  // interleaved (repack_q8_0.h, repack_q5_0x16.h, repack_q4_k.h,
  // repack_q6_k.h) into a copy the weight owns, the last rows % 16 copied
  // plain after the groups; from then on only that copy is read. Q5_0 rows
  // of fewer than sixteen, at least one eight-block group long, are
  // regrouped (repack_q5_0.h). Without memory for a copy the plain blocks
  // serve.
  const auto copy_of = [&](size_t bytes) { return arena ? arena->allocate(bytes) : make_huge_buffer(bytes); };
  const int64_t nb = cols / 32;
  try {
    if (const group_format* f = group_format_of(type); f && row_groups(rows) > 0 && cols > 0 && data) {
      const int64_t groups = row_groups(rows), grouped = groups * k_group_rows;
      const size_t group_bytes = group_bytes_of(*f, cols), rest = static_cast<size_t>(rows - grouped) * w.row_bytes;
      std::shared_ptr<uint8_t[]> copy = copy_of(static_cast<size_t>(groups) * group_bytes + rest);
      for (int64_t g = 0; g < groups; ++g)
        f->repack(data + g * k_group_rows * w.row_bytes, w.row_bytes, copy.get() + g * group_bytes, cols / f->block_cols);
      std::copy_n(data + grouped * w.row_bytes, rest, copy.get() + groups * group_bytes);
      w.repacked = std::move(copy);
    } else if (type == ggml_type::q5_0 && nb >= detail::k_q5_0x8_blocks && rows > 0 && data) {
      std::shared_ptr<uint8_t[]> copy = copy_of(w.row_bytes * static_cast<size_t>(rows));
      for (int64_t r = 0; r < rows; ++r)
        detail::repack_row_q5_0x8(reinterpret_cast<const block_q5_0*>(data + r * w.row_bytes),
                                  copy.get() + r * w.row_bytes, nb);
      w.repacked = std::move(copy);
    }
  } catch (const std::bad_alloc&) {
  }
  return w;
}

namespace {

constexpr size_t k_max_fused = 4;  // matrices of one decode job

// A decode job: the rows of one or more matrices against one activation row,
// cut into pieces of about 32 KiB of weights (whole groups of sixteen rows),
// numbered in memory order through the matrices. Each thread owns a
// contiguous run of pieces and takes them front to back, so its reads form
// one stream that the hardware prefetchers follow from piece to piece; a
// thread whose run is done takes pieces from the back of another's run
// (one that has not joined yet, or is slower). With one shared counter
// instead, every claim started a new stream, and one thread of two idled at
// the end of each matrix for most of a chunk (a median of 19 us of 140 in a
// 896x4864 Q8_0 GEMV, chunks of 256 KiB).
struct gemv_part {
  row_reader rd;
  const uint8_t* acts = nullptr;
  float* y = nullptr;
  int64_t rows = 0, cols = 0, piece = 0, n_pieces = 0;

  gemv_part() = default;
  gemv_part(const weight_matrix& w, const uint8_t* a, float* out)
      : rd(reader_of(w, detail::active_kernels())), acts(a), y(out), rows(w.rows), cols(w.cols) {
    const int64_t unit = rd.unit();
    const int64_t row_bytes = static_cast<int64_t>(std::max<size_t>(1, w.row_bytes));
    piece = (std::max<int64_t>(1, (32 << 10) / row_bytes) + unit - 1) / unit * unit;
    n_pieces = (rows + piece - 1) / piece;
  }
  void run_piece(int64_t i) const {  // 0 <= i < n_pieces
    rd.run(cols, i * piece, std::min(rows, (i + 1) * piece), acts, 0, 1, y, rows);
  }
};

// A job of the learned order (gemv_order) as run_gemv cuts it: each matrix's
// reader and pieces, and the copy prepare_weight made that its rows lie in.
struct order_part {
  row_reader rd;
  int64_t rows = 0, piece = 0, n_pieces = 0;
  std::shared_ptr<const void> keep;  // null: a weight without a copy, not read ahead

  order_part() = default;
  order_part(const weight_matrix& w, const gemv_part& p)
      : rd(p.rd), rows(p.rows), piece(p.piece), n_pieces(p.n_pieces), keep(w.repacked) {}
};

struct order_job {
  std::array<const weight_matrix*, k_max_fused> ws{};
  size_t n = 0;
  std::array<order_part, k_max_fused> parts;
  int64_t total = 0;  // pieces

  bool is(std::span<const weight_matrix* const> job) const {
    return job.size() == n && std::equal(job.begin(), job.end(), ws.begin());
  }
};

}  // namespace

struct gemv_order_state {
  std::vector<order_job> jobs;  // the order last seen
  size_t cursor = 0;            // jobs[cursor] is expected next
};

gemv_order::gemv_order() : state_(std::make_unique<gemv_order_state>()) {}
gemv_order::~gemv_order() = default;

namespace {

// The job expected next: jobs[cursor], or the first past the last (null
// while fewer than two are known).
const order_job* expected_job(const gemv_order_state& st) {
  if (st.jobs.size() < 2) return nullptr;
  return &st.jobs[st.cursor < st.jobs.size() ? st.cursor : 0];
}

}  // namespace

std::vector<const weight_matrix*> gemv_order::next_job() const {
  const order_job* j = expected_job(*state_);
  if (!j) return {};
  return {j->ws.begin(), j->ws.begin() + static_cast<std::ptrdiff_t>(j->n)};
}

namespace {

constexpr size_t k_max_order_jobs = 4096;  // an order that never repeats starts over past this many jobs

// Records `ws` as the job after the last one and returns the job that
// followed it last time (null while nothing has been learned).
const order_job* record_job(gemv_order_state& st, std::span<const weight_matrix* const> ws,
                            std::span<const gemv_part> parts) {
  auto& jobs = st.jobs;
  if (st.cursor < jobs.size() && jobs[st.cursor].is(ws)) {
    ++st.cursor;
  } else if (!jobs.empty() && jobs[0].is(ws)) {  // the next decode step
    st.cursor = 1;
  } else {  // new, or the order changed: learn from here
    if (st.cursor >= k_max_order_jobs) st.cursor = 0;
    jobs.resize(st.cursor);
    order_job& j = jobs.emplace_back();
    for (size_t i = 0; i < ws.size(); ++i) j.ws[i] = ws[i], j.parts[i] = order_part(*ws[i], parts[i]), j.total += parts[i].n_pieces;
    j.n = ws.size();
    ++st.cursor;
  }
  return expected_job(st);
}

// Where run r of n_runs starts in a job of `total` pieces (run r ends where r + 1 starts).
int64_t run_start(int64_t total, int r, int n_runs) { return total * r / n_runs; }

// How much of its next run a worker reads ahead: half its L2 (1 MiB on Zen
// 4), so that what it reads is still there when the job comes.
size_t read_ahead_bytes() {
  static const size_t bytes = [] {
    const long l2 = sysconf(_SC_LEVEL2_CACHE_SIZE);
    return l2 > 0 ? std::clamp<size_t>(static_cast<size_t>(l2) / 2, 64 << 10, 1 << 20) : size_t{256} << 10;
  }();
  return bytes;
}

// The start of run r (of n_runs) of job j, up to read_ahead_bytes(), as byte ranges.
thread_pool::read_list read_list_for(const order_job& j, int r, int n_runs) {
  static_assert(k_max_fused <= thread_pool::k_max_read_ranges);
  thread_pool::read_list out;
  const size_t cap = read_ahead_bytes();
  size_t k = 0, got = 0;
  const int64_t end = run_start(j.total, r + 1, n_runs);
  int64_t at = run_start(j.total, r, n_runs), first = 0;  // first: the job-wide index of part p's first piece
  for (size_t p = 0; p < j.n && at < end && got < cap; first += j.parts[p].n_pieces, ++p) {
    const order_part& q = j.parts[p];
    const int64_t lo = std::max(at, first), hi = std::min(end, first + q.n_pieces);
    if (lo >= hi) continue;
    at = hi;
    if (!q.keep) continue;
    const uint8_t* a = q.rd.addr((lo - first) * q.piece);
    const size_t n = std::min(static_cast<size_t>(q.rd.addr(std::min(q.rows, (hi - first) * q.piece)) - a), cap - got);
    out[k++] = {a, n, q.keep};
    got += n;
  }
  return out;
}

// Pieces [lo, hi) of one thread's run, as lo | hi << 32: the owner takes lo,
// others take hi - 1.
struct alignas(64) piece_run {
  std::atomic<uint64_t> v{0};
  static uint64_t pack(int64_t lo, int64_t hi) { return static_cast<uint64_t>(lo) | static_cast<uint64_t>(hi) << 32; }
  bool take(bool front, int64_t& i) {
    uint64_t cur = v.load(std::memory_order_relaxed);
    for (;;) {
      const int64_t lo = static_cast<int64_t>(cur & 0xFFFFFFFFu), hi = static_cast<int64_t>(cur >> 32);
      if (lo >= hi) return false;
      const uint64_t next = front ? pack(lo + 1, hi) : pack(lo, hi - 1);
      if (v.compare_exchange_weak(cur, next, std::memory_order_relaxed)) {
        i = front ? lo : hi - 1;
        return true;
      }
    }
  }
};

constexpr int k_max_runs = 64;  // threads past this many start by taking from others' runs

// With `next`, each worker then reads ahead the start of its run of that job.
void run_gemv(thread_pool& pool, std::span<const gemv_part> parts, const cancel_token* stop, const order_job* next) {
  int64_t total = 0;
  for (const auto& p : parts) total += p.n_pieces;
  const int n_runs = std::min(pool.size(), k_max_runs);
  // The calling thread's slots, kept from job to job: 64 of them built on
  // the stack zeroed 4 KiB per job, lines the job before had evicted (0.31
  // us a job against 0.03-0.07, 97 jobs a 0.5B token). The workers reach
  // them through `runs`: in their own code the name `slots` is their own.
  thread_local piece_run slots[k_max_runs];
  piece_run* const runs = slots;
  for (int r = 0; r < n_runs; ++r)
    runs[r].v.store(piece_run::pack(run_start(total, r, n_runs), run_start(total, r + 1, n_runs)));
  pool.run_dynamic([&](int ith, int) {
    int64_t done = 0;
    const auto run_one = [&](int64_t i) {
      size_t j = 0;
      while (i >= parts[j].n_pieces) i -= parts[j++].n_pieces;
      parts[j].run_piece(i);
    };
    for (int k = 0; k < n_runs; ++k) {  // own run first, then the others' from their backs
      const int r = (ith + k) % n_runs;
      for (int64_t i; runs[r].take(ith < n_runs && k == 0, i);) {
        if (stop && done++ % 8 == 0 && stop->is_cancelled()) return;  // polled every 256 KiB or so
        run_one(i);
      }
    }
    if (next && ith > 0 && ith < n_runs) pool.read_after_share(ith, read_list_for(*next, ith, n_runs));
  });
}

// Decode of up to k_max_fused matrices of equal columns as one job: the
// activation row is quantized once per kind the matrices need.
void gemv_many(thread_pool& pool, std::span<const weight_matrix* const> ws, const float* x,
               std::span<float* const> ys, const cancel_token* stop, gemv_order* order) {
  const int64_t cols = ws[0]->cols;
  size_t offset[3] = {0, 0, 0};  // of each act_kind's row in the scratch buffer
  bool needed[3] = {false, false, false};
  for (const auto* w : ws) needed[static_cast<int>(act_kind_of(w->type))] = true;
  size_t bytes = 0;
  for (int k = 1; k < 3; ++k)
    if (needed[k]) offset[k] = bytes, bytes += act_bytes(static_cast<act_kind>(k), cols);
  auto& buf = scratch();
  if (buf.size() < bytes) buf.resize(bytes);
  for (int k = 1; k < 3; ++k)
    if (needed[k]) quantize_act(static_cast<act_kind>(k), x, buf.data() + offset[k], cols);

  std::array<gemv_part, k_max_fused> parts;
  for (size_t i = 0; i < ws.size(); ++i) {
    const act_kind kind = act_kind_of(ws[i]->type);
    const uint8_t* acts = kind == act_kind::f32 ? reinterpret_cast<const uint8_t*>(x) : buf.data() + offset[static_cast<int>(kind)];
    parts[i] = gemv_part(*ws[i], acts, ys[i]);
  }
  const std::span<const gemv_part> job(parts.data(), ws.size());
  const order_job* next = order && order->enabled && pool.size() > 1 ? record_job(order->state(), ws, job) : nullptr;
  run_gemv(pool, job, stop, next);
}

}  // namespace

void matmul(thread_pool& pool, const weight_matrix& w, const float* x, int64_t n_tokens, float* y,
            const cancel_token* stop, gemv_order* order) {
  if (n_tokens <= 0 || w.rows == 0) return;
  if (n_tokens == 1) {
    const weight_matrix* ws[] = {&w};
    float* ys[] = {y};
    gemv_many(pool, ws, x, ys, stop, order);
    return;
  }
  const row_reader rd = reader_of(w, detail::active_kernels());
  const act_kind kind = act_kind_of(w.type);
  const int64_t rows = w.rows, cols = w.cols;
  const size_t stride = act_bytes(kind, cols);

  // Prefill: activations are quantized in parallel, one token per claim.
  const uint8_t* acts = reinterpret_cast<const uint8_t*>(x);
  if (kind != act_kind::f32) {
    auto& buf = scratch();
    if (buf.size() < stride * static_cast<size_t>(n_tokens)) buf.resize(stride * static_cast<size_t>(n_tokens));
    uint8_t* dst = buf.data();
    std::atomic<int64_t> next_tok{0};
    pool.run_dynamic([&](int, int) {
      for (int64_t t; (t = next_tok.fetch_add(1, std::memory_order_relaxed)) < n_tokens;)
        quantize_act(kind, x + t * cols, dst + t * stride, cols);
    });
    acts = dst;
  }

  // Rows per block: about 64 KiB of weights, at least 4 rows (16 in groups).
  const int64_t block_rows =
      std::max(rd.unit(), std::clamp<int64_t>(static_cast<int64_t>((64 << 10) / std::max<size_t>(1, w.row_bytes)), 4, 256) /
                              rd.unit() * rd.unit());
  std::atomic<int64_t> next{0};
  pool.run_dynamic([&](int, int) {
    for (;;) {
      const int64_t r0 = next.fetch_add(block_rows, std::memory_order_relaxed);
      if (r0 >= rows || (stop && stop->is_cancelled())) break;
      const int64_t r1 = std::min(rows, r0 + block_rows);
      for (int64_t t0 = 0; t0 < n_tokens; t0 += detail::k_max_tile) {
        const int nt = static_cast<int>(std::min<int64_t>(detail::k_max_tile, n_tokens - t0));
        rd.run(cols, r0, r1, acts + static_cast<size_t>(t0) * stride, stride, nt, y + t0 * rows, rows);
      }
    }
  });
}

void matmul_many(thread_pool& pool, std::span<const weight_matrix* const> ws, const float* x, int64_t n_tokens,
                 std::span<float* const> ys, const cancel_token* stop, gemv_order* order) {
  if (ws.size() != ys.size()) throw std::invalid_argument("matmul_many: one output per matrix");
  for (const auto* w : ws)
    if (w->cols != ws[0]->cols) throw std::invalid_argument("matmul_many: the matrices differ in columns");
  if (n_tokens != 1) {
    for (size_t i = 0; i < ws.size(); ++i) matmul(pool, *ws[i], x, n_tokens, ys[i], stop, order);
    return;
  }
  for (size_t i = 0; i < ws.size(); i += k_max_fused) {
    size_t n = 0;  // matrices of this job: empty ones are left out
    const weight_matrix* job_w[k_max_fused];
    float* job_y[k_max_fused];
    for (size_t k = i; k < std::min(ws.size(), i + k_max_fused); ++k)
      if (ws[k]->rows > 0) job_w[n] = ws[k], job_y[n] = ys[k], ++n;
    if (n > 0) gemv_many(pool, std::span(job_w, n), x, std::span(job_y, n), stop, order);
  }
}

void dequantize_weight_row(const weight_matrix& w, int64_t r, float* dst) {
  const row_reader rd = reader_of(w, detail::scalar_kernels());
  if (layout_of(w) == layout::q5_0x8)
    detail::dequantize_row_q5_0x8(rd.rows + r * w.row_bytes, dst, w.cols);
  else if (r < rd.grouped)
    group_format_of(w.type)->dequantize(rd.groups + (r / k_group_rows) * rd.group_bytes,
                                        static_cast<int>(r % k_group_rows), dst, w.cols);
  else
    dequantize_row(w.type, rd.rows + (r - rd.grouped) * w.row_bytes, dst, w.cols);
}

void dequantize_row(ggml_type type, const void* src, float* dst, int64_t n) {
  switch (type) {
    case ggml_type::f32: std::copy_n(static_cast<const float*>(src), n, dst); break;
    case ggml_type::f16: f16_to_f32_row(static_cast<const fp16_t*>(src), dst, n); break;
    case ggml_type::bf16:
      for (int64_t i = 0; i < n; ++i) dst[i] = bf16_to_f32(static_cast<const bf16_t*>(src)[i]);
      break;
    case ggml_type::q8_0: detail::dequantize_row_q8_0(static_cast<const block_q8_0*>(src), dst, n); break;
    case ggml_type::q4_0: detail::dequantize_row_q4_0(static_cast<const block_q4_0*>(src), dst, n); break;
    case ggml_type::q4_1: detail::dequantize_row_q4_1(static_cast<const block_q4_1*>(src), dst, n); break;
    case ggml_type::q5_0: detail::dequantize_row_q5_0(static_cast<const block_q5_0*>(src), dst, n); break;
    case ggml_type::q5_1: detail::dequantize_row_q5_1(static_cast<const block_q5_1*>(src), dst, n); break;
    case ggml_type::q4_k: detail::dequantize_row_q4_k(static_cast<const block_q4_k*>(src), dst, n); break;
    case ggml_type::q5_k: detail::dequantize_row_q5_k(static_cast<const block_q5_k*>(src), dst, n); break;
    case ggml_type::q6_k: detail::dequantize_row_q6_k(static_cast<const block_q6_k*>(src), dst, n); break;
    case ggml_type::q8_k: detail::dequantize_row_q8_k(static_cast<const block_q8_k*>(src), dst, n); break;
  }
}

void quantize_row(ggml_type type, const float* src, void* dst, int64_t n) {
  switch (type) {
    case ggml_type::f32: std::copy_n(src, n, static_cast<float*>(dst)); break;
    case ggml_type::f16: f32_to_f16_row(src, static_cast<fp16_t*>(dst), n); break;
    case ggml_type::bf16:
      for (int64_t i = 0; i < n; ++i) static_cast<bf16_t*>(dst)[i] = f32_to_bf16(src[i]);
      break;
    case ggml_type::q8_0: detail::quantize_row_q8_0_ref(src, static_cast<block_q8_0*>(dst), n); break;
    case ggml_type::q4_0: detail::quantize_row_q4_0_ref(src, static_cast<block_q4_0*>(dst), n); break;
    case ggml_type::q4_1: detail::quantize_row_q4_1_ref(src, static_cast<block_q4_1*>(dst), n); break;
    case ggml_type::q5_0: detail::quantize_row_q5_0_ref(src, static_cast<block_q5_0*>(dst), n); break;
    case ggml_type::q5_1: detail::quantize_row_q5_1_ref(src, static_cast<block_q5_1*>(dst), n); break;
    case ggml_type::q4_k: detail::quantize_row_q4_k_ref(src, static_cast<block_q4_k*>(dst), n); break;
    case ggml_type::q5_k: detail::quantize_row_q5_k_ref(src, static_cast<block_q5_k*>(dst), n); break;
    case ggml_type::q6_k: detail::quantize_row_q6_k_ref(src, static_cast<block_q6_k*>(dst), n); break;
    case ggml_type::q8_k: detail::quantize_row_q8_k_ref(src, static_cast<block_q8_k*>(dst), n); break;
  }
}

}  // namespace qf::infer::cpu
