// Internal: Q6_K rows interleaved sixteen at a time for the SIMD kernels
// ("q6_kx16"), the same idea as repack_q4_k.h.
//
// Q6_K holds the output projection and the value/down projections of a
// Q4_K_M file. A plain block dotted on its own spends its instructions on
// layout: two 2-bit planes and two nibble planes are shifted and merged per
// 64 bytes, and each sub-block's scale is permuted to its lanes. With sixteen
// rows side by side, lane r of a 512-bit register is row r: four bytes of a
// row's 6-bit values meet four activation bytes broadcast to every lane, the
// scales are one byte per lane, and the sixteen sums come out as one vector.
// One super-block (256 columns) of sixteen rows, for j = 0..7 the 32
// columns 32j..32j+31 (scale sub-blocks 2j and 2j+1):
//
//   d[16]             each row's fp16 super-block scale
//   sc[8][16][2]      sc[j][r][h]: the scale of sub-block 2j+h of row r
//   then for each j, the 384 bytes of its columns (q[j]):
//   qh[2][16][4]      qh[h][r][i], bits 2s..2s+1: the high two bits of
//                     element 4s+i of sub-block 2j+h of row r
//   ql[4][16][4]      ql[s][r][i]: low four bits of element 4s+i of
//                     sub-block 2j of row r in the low nibble, of element
//                     4s+i of sub-block 2j+1 in the high nibble
//
// The kernels read a group front to back: the scales, then each run of 32
// columns whole (a decode GEMV from memory on a Zen 5 core streamed 18-22
// GB/s with all low bits ahead of all high bits, two interleaved streams).
//
// 3360 bytes, exactly sixteen plain blocks. A weight's rows are grouped while
// sixteen remain; the last rows % 16 stay plain, after the groups. Every
// reader of an interleaved weight reads this copy only, so the loader can
// free the plain bytes.
#pragma once

#include <cstddef>
#include <cstdint>

#include "inference/core/ggml_types.h"

namespace qf::infer::cpu::detail {

inline constexpr int k_q6_kx16_rows = 16;

struct block_q6_kx16 {
  fp16_t d[k_q6_kx16_rows];
  int8_t sc[8][k_q6_kx16_rows][2];
  struct run {  // columns 32j..32j+31
    uint8_t qh[2][k_q6_kx16_rows][4];
    uint8_t ql[4][k_q6_kx16_rows][4];
  } q[8];
};
static_assert(sizeof(block_q6_kx16) == 16 * sizeof(block_q6_k));

// Element e (0..255) of row r, as stored: 0..63 (the value is q - 32).
inline int q6_kx16_quant(const block_q6_kx16& x, int r, int e) {
  const int j = e / 32, h = (e % 32) / 16, s = (e % 16) / 4, i = e % 4;
  return ((x.q[j].ql[s][r][i] >> (4 * h)) & 0xF) | ((x.q[j].qh[h][r][i] >> (2 * s)) & 3) << 4;
}

// Sixteen rows of nb plain blocks each (row i at src + i * row_bytes) into
// nb interleaved blocks at dst.
void repack_rows_q6_kx16(const uint8_t* src, size_t row_bytes, block_q6_kx16* dst, int64_t nb);
// Row r (0..15) of a group of n columns back to floats, bit-exact to
// dequantize_row_q6_k on the plain row.
void dequantize_row_q6_kx16(const block_q6_kx16* group, int r, float* y, int64_t n);

}  // namespace qf::infer::cpu::detail
