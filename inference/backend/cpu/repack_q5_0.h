// Internal: Q5_0 regrouped for the SIMD kernels ("q5_0x8").
//
// Q5_0 dominates the Q4_K_M files of models whose rows are not a multiple of
// 256 (llama.cpp's quantizer falls back from Q4_K to Q5_0 there: 132 of 169
// tensors of Qwen2.5-Coder-0.5B). Its plain block spends most of an AVX2
// kernel's work on layout, not arithmetic: the 32 fifth bits are spread to
// bytes by a shuffle and a compare, the 16 nibble bytes need a lane insert,
// and each block's fp16 scale is converted and broadcast on its own. The
// regrouped row holds the same bits, eight blocks at a time:
//
//   d[8]      the eight fp16 scales, converted by one instruction
//   qh[32]    byte j, bit k: the fifth bit of element j of block k
//   qs[4][32] byte j of row p: element j of block lo(p) = 4 (p / 2) + p % 2
//             (low nibble) and of block lo(p) + 2 (high nibble), elements in
//             natural order: rows 0-1 hold blocks 0, 1 low and 2, 3 high,
//             rows 2-3 blocks 4, 5 and 6, 7, so a 64-byte load's low
//             nibbles are two consecutive blocks, as are its high ones
//
// 176 bytes, exactly eight plain blocks. When four or more blocks remain
// after the last group (28-block rows, 896 columns, leave four), the next four
// form a half group, 88 bytes, exactly four plain blocks:
//
//   d[4]      the four fp16 scales
//   qh[4]     32-bit word k, bit j: the fifth bit of element j of block k
//             (a plain block's qh word; two of them are the byte mask of a
//             512-bit register of two blocks)
//   qs[2][32] rows 0-1 of a group: blocks 0, 1 low and 2, 3 high
//
// So a regrouped row has the plain row's length: full groups, a half group
// when nb % 8 >= 4, then the last nb % 4 blocks unchanged.
// Every reader of a regrouped weight (each kernel level's dot_q5_0x8,
// get_rows through dequantize_row_q5_0x8) reads this copy only, so the
// loader can free the plain bytes.
#pragma once

#include <cstddef>
#include <cstdint>

#include "inference/backend/cpu/quants.h"
#include "inference/core/ggml_types.h"

namespace qf::infer::cpu::detail {

inline constexpr int k_q5_0x8_blocks = 8;

struct block_q5_0x8 {
  fp16_t d[k_q5_0x8_blocks];
  uint8_t qh[32];
  uint8_t qs[k_q5_0x8_blocks / 2][32];
};
static_assert(sizeof(block_q5_0x8) == k_q5_0x8_blocks * sizeof(block_q5_0));

struct block_q5_0x4 {
  fp16_t d[4];
  uint8_t qh[16];  // four little-endian 32-bit words (a row may start at any even byte)
  uint8_t qs[2][32];
};
static_assert(sizeof(block_q5_0x4) == 4 * sizeof(block_q5_0));

// Where the parts of a regrouped row of nb blocks begin: the half group, if
// any, right after the full groups; the plain blocks after it. Every part is
// as long as the plain blocks it holds, so block b's part starts at byte
// 22 b of the row.
struct q5_0x8_row_layout {
  int64_t groups;  // full groups: blocks [0, 8 groups)
  bool half;       // a half group: blocks [8 groups, 8 groups + 4)
  int64_t plain;   // the first plain block
  explicit q5_0x8_row_layout(int64_t nb)
      : groups(nb / k_q5_0x8_blocks), half(nb % k_q5_0x8_blocks >= 4), plain(groups * k_q5_0x8_blocks + (half ? 4 : 0)) {}
  // Byte offset of the part that begins at block b.
  static size_t offset(int64_t b) { return static_cast<size_t>(b) * sizeof(block_q5_0); }
  const block_q5_0x4* half_group(const void* row) const {  // when `half`
    return reinterpret_cast<const block_q5_0x4*>(static_cast<const uint8_t*>(row) + offset(groups * k_q5_0x8_blocks));
  }
  const block_q5_0* plain_blocks(const void* row) const {
    return reinterpret_cast<const block_q5_0*>(static_cast<const uint8_t*>(row) + offset(plain));
  }
};

// The qs row that holds block k's nibbles, and their shift in it (0 or 4).
constexpr int q5_0x8_row(int k) { return 2 * (k / 4) + k % 2; }
constexpr int q5_0x8_shift(int k) { return 4 * ((k % 4) / 2); }

// Element j (0..31) of block k of a group, as stored: 0..31 (value = (q - 16) * d).
inline int q5_0x8_quant(const block_q5_0x8& g, int k, int j) {
  return ((g.qs[q5_0x8_row(k)][j] >> q5_0x8_shift(k)) & 0xF) | ((g.qh[j] >> k) & 1) << 4;
}

// Element j of block k (0..3) of a half group.
inline int q5_0x4_quant(const block_q5_0x4& g, int k, int j) {
  return ((g.qs[k % 2][j] >> (4 * (k / 2))) & 0xF) | static_cast<int>((load_qh(g.qh + 4 * k) >> j) & 1u) << 4;
}

// One row of nb plain blocks into the layout above (dst: nb * 22 bytes).
void repack_row_q5_0x8(const block_q5_0* src, uint8_t* dst, int64_t nb);
// A regrouped row of n elements back to floats, bit-exact to dequantize_row_q5_0.
void dequantize_row_q5_0x8(const uint8_t* row, float* y, int64_t n);

}  // namespace qf::infer::cpu::detail
