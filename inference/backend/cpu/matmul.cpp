// Weight preparation and the two matmul paths.
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
#include "inference/backend/cpu/repack_q5_0.h"

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
  // Q5_0 rows of at least one eight-block group are regrouped
  // (repack_q5_0.h) into a copy the weight owns; from then on only that copy
  // is read. Without memory for it the plain blocks serve.
  const int64_t nb = cols / 32;
  if (type == ggml_type::q5_0 && nb >= detail::k_q5_0x8_blocks && rows > 0 && data) {
    try {
      const size_t bytes = w.row_bytes * static_cast<size_t>(rows);
      std::shared_ptr<uint8_t[]> copy = arena ? arena->allocate(bytes) : make_huge_buffer(bytes);
      for (int64_t r = 0; r < rows; ++r)
        detail::repack_row_q5_0x8(reinterpret_cast<const block_q5_0*>(data + r * w.row_bytes),
                                  copy.get() + r * w.row_bytes, nb);
      w.repacked = std::move(copy);
    } catch (const std::bad_alloc&) {
    }
  }
  return w;
}

void matmul(thread_pool& pool, const weight_matrix& w, const float* x, int64_t n_tokens, float* y,
            const cancel_token* stop) {
  if (n_tokens <= 0 || w.rows == 0) return;
  const auto& kt = detail::active_kernels();
  const bool regrouped = w.repacked && w.type == ggml_type::q5_0;
  const detail::row_dot_fn dot = regrouped ? kt.dot_q5_0x8 : detail::row_dot_for(kt, w.type);
  const uint8_t* const wdata = regrouped ? static_cast<const uint8_t*>(w.repacked.get()) : w.data;
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
    const int64_t chunk = std::max<int64_t>(
        4, std::min<int64_t>(std::max<int64_t>(64, static_cast<int64_t>((256 << 10) / w.row_bytes)),
                             rows / (8 * pool.size()) + 1));
    pool.run_dynamic([&](int, int) {
      for (;;) {
        const int64_t r0 = next.fetch_add(chunk, std::memory_order_relaxed);
        if (r0 >= rows || (stop && stop->is_cancelled())) break;
        const int64_t r1 = std::min(rows, r0 + chunk);
        const uint8_t* wr = wdata + r0 * w.row_bytes;
        for (int64_t r = r0; r < r1; ++r, wr += w.row_bytes) dot(cols, wr, acts, stride, 1, y + r);
      }
    });
    return;
  }

  // Rows per block: about 64 KiB of weights, at least 4 rows.
  const int64_t block_rows = std::clamp<int64_t>(static_cast<int64_t>((64 << 10) / std::max<size_t>(1, w.row_bytes)), 4, 256);
  pool.run_dynamic([&](int, int) {
    float out[detail::k_max_tile];
    for (;;) {
      const int64_t r0 = next.fetch_add(block_rows, std::memory_order_relaxed);
      if (r0 >= rows || (stop && stop->is_cancelled())) break;
      const int64_t r1 = std::min(rows, r0 + block_rows);
      for (int64_t t0 = 0; t0 < n_tokens; t0 += detail::k_max_tile) {
        const int nt = static_cast<int>(std::min<int64_t>(detail::k_max_tile, n_tokens - t0));
        const uint8_t* at = acts + static_cast<size_t>(t0) * stride;
        for (int64_t r = r0; r < r1; ++r) {
          dot(cols, wdata + r * w.row_bytes, at, stride, nt, out);
          for (int i = 0; i < nt; ++i) y[(t0 + i) * rows + r] = out[i];
        }
      }
    }
  });
}

void dequantize_weight_row(const weight_matrix& w, int64_t r, float* dst) {
  if (w.repacked && w.type == ggml_type::q5_0)
    detail::dequantize_row_q5_0x8(static_cast<const uint8_t*>(w.repacked.get()) + r * w.row_bytes, dst, w.cols);
  else
    dequantize_row(w.type, w.data + r * w.row_bytes, dst, w.cols);
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
