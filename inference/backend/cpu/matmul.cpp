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
// Decode (one token): the activation is quantized once, then rows are handed
// out in chunks through an atomic counter (robust when a core is shared with
// other work) and each row is one streaming dot product: the whole cost is
// reading the weights once, so this path is bound by memory bandwidth.
// Prefill (many tokens): activations are quantized in parallel, then each
// thread takes blocks of rows small enough to stay in L2 and sweeps all tokens
// over them in tiles of k_max_tile, so every weight block is loaded from memory
// once per row block and reused from L1 for several tokens.
#include <algorithm>
#include <atomic>
#include <memory>
#include <new>
#include <stdexcept>
#include <string>
#include <vector>

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
  // Rows [r0, r1), r0 a multiple of unit(), against nt <= k_max_tile tokens:
  // row r of token t into out[t * os + r].
  void run(int64_t cols, int64_t r0, int64_t r1, const uint8_t* acts, size_t stride, int nt, float* out,
           int64_t os) const {
    int64_t r = r0;
    for (const int64_t g1 = std::min(r1, grouped); r < g1; r += k_group_rows)
      group_dot(cols, groups + (r / k_group_rows) * group_bytes, acts, stride, nt, out + r, os);
    float tmp[detail::k_max_tile];
    for (; r < r1; ++r) {
      dot(cols, rows + (r - grouped) * row_bytes, acts, stride, nt, tmp);
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

void matmul(thread_pool& pool, const weight_matrix& w, const float* x, int64_t n_tokens, float* y,
            const cancel_token* stop) {
  if (n_tokens <= 0 || w.rows == 0) return;
  const row_reader rd = reader_of(w, detail::active_kernels());
  const act_kind kind = act_kind_of(w.type);
  const int64_t rows = w.rows, cols = w.cols;
  const size_t stride = act_bytes(kind, cols);

  const uint8_t* acts = reinterpret_cast<const uint8_t*>(x);
  if (kind != act_kind::f32) {
    auto& buf = scratch();
    if (buf.size() < stride * static_cast<size_t>(n_tokens)) buf.resize(stride * static_cast<size_t>(n_tokens));
    uint8_t* dst = buf.data();
    if (n_tokens == 1) {
      quantize_act(kind, x, dst, cols);
    } else {
      std::atomic<int64_t> next_tok{0};
      pool.run_dynamic([&](int, int) {
        for (int64_t t; (t = next_tok.fetch_add(1, std::memory_order_relaxed)) < n_tokens;)
          quantize_act(kind, x + t * cols, dst + t * stride, cols);
      });
    }
    acts = dst;
  }

  std::atomic<int64_t> next{0};
  if (n_tokens == 1) {
    // Chunks of about 256 KiB of weights (at least 64 rows), but at least 8
    // per thread: long contiguous runs per thread let the hardware prefetchers
    // stream. Chunks of 64 short rows (61 KiB at 896 columns) left the second
    // thread adding almost nothing; 256 KiB made 0.5B decode 1.2-1.3x faster.
    const int64_t unit = rd.unit();
    const int64_t chunk = (std::max<int64_t>(
        4, std::min<int64_t>(std::max<int64_t>(64, static_cast<int64_t>((256 << 10) / w.row_bytes)),
                             rows / (8 * pool.size()) + 1)) + unit - 1) / unit * unit;
    pool.run_dynamic([&](int, int) {
      for (;;) {
        const int64_t r0 = next.fetch_add(chunk, std::memory_order_relaxed);
        if (r0 >= rows || (stop && stop->is_cancelled())) break;
        rd.run(cols, r0, std::min(rows, r0 + chunk), acts, stride, 1, y, rows);
      }
    });
    return;
  }

  // Rows per block: about 64 KiB of weights, at least 4 rows (16 in groups).
  const int64_t block_rows =
      std::max(rd.unit(), std::clamp<int64_t>(static_cast<int64_t>((64 << 10) / std::max<size_t>(1, w.row_bytes)), 4, 256) /
                              rd.unit() * rd.unit());
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
