// Internal: Q4_K rows interleaved sixteen at a time for the SIMD kernels
// ("q4_kx16").
//
// A Q4_K row dotted on its own spends most of a kernel's instructions on
// layout: the nibbles of a 64-byte load are two sub-blocks that must be
// permuted apart, the twelve bytes of six-bit scales are unpacked, and the
// row's sum is reduced across a register at the end. With sixteen rows side by
// side, lane r of a 512-bit register is row r: four bytes of a row's nibbles
// meet four activation bytes broadcast to every lane (one vpdpbusd does 64
// products, all sixteen rows at once), the sub-block scales are one byte per
// lane, and the sixteen sums come out as one vector. One super-block (256
// columns) of sixteen rows:
//
//   d[16], dmin[16]   each row's fp16 super-block scales
//   sc[8][16]         sc[j][r]: the scale of sub-block j of row r (0..63)
//   m[4][16][2]       m[p][r]: the mins of sub-blocks 2p and 2p+1 of row r
//   qs[8][4][16][4]   qs[j][s][r][i]: element 4s+i of sub-block j of row r in
//                     the low nibble, element 16+4s+i in the high one
//
// 2368 bytes for 16 x 144 plain ones: the scales take 256 bytes unpacked
// against 192 packed. A weight's rows are grouped while sixteen remain; the
// last rows % 16 stay plain, after the groups. Every reader of an
// interleaved weight (each kernel level's dot_q4_kx16, get_rows through
// dequantize_row_q4_kx16) reads this copy only, so the loader can free the
// plain bytes.
#pragma once

#include <cstddef>
#include <cstdint>

#include "inference/core/ggml_types.h"

namespace qf::infer::cpu::detail {

inline constexpr int k_q4_kx16_rows = 16;

struct block_q4_kx16 {
  fp16_t d[k_q4_kx16_rows];
  fp16_t dmin[k_q4_kx16_rows];
  uint8_t sc[8][k_q4_kx16_rows];
  uint8_t m[4][k_q4_kx16_rows][2];
  uint8_t qs[8][4][k_q4_kx16_rows][4];
};
static_assert(sizeof(block_q4_kx16) == 2368);

// Element e (0..31) of sub-block j of row r, as stored: 0..15.
inline int q4_kx16_quant(const block_q4_kx16& x, int r, int j, int e) {
  return (x.qs[j][(e % 16) / 4][r][e % 4] >> (e < 16 ? 0 : 4)) & 0xF;
}

// The activation sums that meet m[p]: the 32-element sums of sub-blocks 2p
// and 2p+1 of a Q8_K block (from its 16-element bsums) as the low and high
// int16 of one word (each at most 32 * 128 in magnitude).
inline int32_t q8_k_sum_pair(const int16_t* bsums, int p) {
  const int lo = bsums[4 * p] + bsums[4 * p + 1], hi = bsums[4 * p + 2] + bsums[4 * p + 3];
  return static_cast<int32_t>((static_cast<uint32_t>(lo) & 0xFFFFu) | static_cast<uint32_t>(hi) << 16);
}

// Sixteen rows of nb plain blocks each (row i at src + i * row_bytes) into
// nb interleaved blocks at dst.
void repack_rows_q4_kx16(const uint8_t* src, size_t row_bytes, block_q4_kx16* dst, int64_t nb);
// Row r (0..15) of a group of n columns back to floats, bit-exact to
// dequantize_row_q4_k on the plain row.
void dequantize_row_q4_kx16(const block_q4_kx16* group, int r, float* y, int64_t n);

}  // namespace qf::infer::cpu::detail
