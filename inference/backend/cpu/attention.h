// Attention over the KV cache on the host (used by the CPU backend, which
// spreads (token, KV head) work items over its thread pool).
//
// For each query head h of a group that shares one KV head:
//   scores[h][j] = scale * q_h . K[j]     for cells j < n_kv
//   p[h]         = softmax(scores[h])
//   out_h        = sum_j p[h][j] * V[j]
//
// K and V point at the group's KV head in physical cell 0 of the cache; the
// rows of the sequence's cells 0..n_kv are found through `cells` (kv_cells):
// cell j at j * row_stride elements (row_stride = n_head_kv * head_dim) when
// the cache is contiguous, or in the block the sequence's block table names
// when it is paged. The heads of a group are
// consecutive in q and out ([n_q][head_dim]). Processing a group together
// reads and converts each F16 key and value row once for all its heads; the
// AVX-512 version (attention_avx512.cpp, head_dim 32, 64, 96 or 128) or the
// AVX2 one (attention_avx2.cpp, AVX2, FMA and F16C) is chosen at run time.
#pragma once

#include <cstdint>

#include "inference/core/ggml_types.h"

namespace qf::infer {

// The SIMD kernels read cache rows this many cells ahead of use. A decode
// step reads the whole cache once and it is not in any cache level at long
// contexts; the hardware prefetchers did not follow the strided rows (a KV
// head's part of each cell) on a Zen 5 EPYC: at 4096 cached cells a 0.5B
// decode step spent 22 ms in attention on one thread, 35 % of it waiting on
// these loads. 16 to 64 rows ahead measured the same.
inline constexpr int64_t k_attention_prefetch_rows = 32;

// Where a sequence's cell j lies in its cache, in elements from the cache's
// physical cell 0: j * row_stride (contiguous, `blocks` null), or paged: cell
// j is row (j & (2^shift - 1)) of physical block blocks[j >> shift], a block
// being 2^shift consecutive physical cells.
struct kv_cells {
  int64_t row_stride = 0;
  const int32_t* blocks = nullptr;
  int shift = 0;
  int64_t offset(int64_t j) const {
    const int64_t cell = blocks ? (int64_t{blocks[j >> shift]} << shift) | (j & ((int64_t{1} << shift) - 1)) : j;
    return cell * row_stride;
  }
};

// scores: scratch of n_q * n_kv floats. out: n_q * head_dim floats.
void attend_group_f16(const float* q, int64_t n_q, const fp16_t* k, const fp16_t* v, const kv_cells& cells,
                      int64_t n_kv, int64_t head_dim, float scale, float* scores, float* out);
void attend_group_f32(const float* q, int64_t n_q, const float* k, const float* v, const kv_cells& cells,
                      int64_t n_kv, int64_t head_dim, float scale, float* scores, float* out);

// The portable version (per-row kernel calls), for tests and CPUs without AVX2.
void attend_group_f16_generic(const float* q, int64_t n_q, const fp16_t* k, const fp16_t* v, const kv_cells& cells,
                              int64_t n_kv, int64_t head_dim, float scale, float* scores, float* out);
// The AVX2/FMA/F16C version; only call when attention_avx2_usable(head_dim).
void attend_group_f16_avx2(const float* q, int64_t n_q, const fp16_t* k, const fp16_t* v, const kv_cells& cells,
                           int64_t n_kv, int64_t head_dim, float scale, float* scores, float* out);
bool attention_avx2_usable(int64_t head_dim);
// The AVX-512 version; only call when attention_avx512_usable(head_dim).
void attend_group_f16_avx512(const float* q, int64_t n_q, const fp16_t* k, const fp16_t* v, const kv_cells& cells,
                             int64_t n_kv, int64_t head_dim, float scale, float* scores, float* out);
bool attention_avx512_usable(int64_t head_dim);

}  // namespace qf::infer
