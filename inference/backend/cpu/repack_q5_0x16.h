// Internal: Q5_0 rows interleaved sixteen at a time for the SIMD kernels
// ("q5_0x16"), the same idea as repack_q8_0.h.
//
// Q5_0 holds most of a Q4_K_M file whose rows do not fit 256-column
// super-blocks (132 of 169 tensors of Qwen2.5-Coder-0.5B). Even regrouped
// eight blocks at a time (repack_q5_0.h) a row's kernel unpacks fifth bits
// through shuffles, spreads block pairs over lanes and ends the row with a
// horizontal sum; on a core that reads about 35 GB/s that work, not memory,
// set the pace. With sixteen rows side by side, lane r of a 512-bit
// register is row r: four bytes of a row's nibbles meet four activation
// bytes broadcast to every lane, the fifth bits of all four words' values sit
// in one byte per nibble byte (lane for lane, one load), and the sixteen
// sums come out as one vector. The values stay unsigned (0..31); each
// block's sum starts at -16 times the activation block's quant sum, which
// takes the offset back out exactly. One block (32 columns) of sixteen rows:
//
//   d[16]          each row's fp16 scale
//   qh[16][4]      qh[r][i], bit 4h+k: the fifth bit of element 16h+4k+i of
//                  row r, i.e. of the value in nibble h of qs[k][r][i]
//   qs[4][16][4]   qs[k][r][i]: byte 4k+i of row r's plain nibbles: element
//                  4k+i in the low nibble, element 16+4k+i in the high one
//
// So word k's fifth bits are one shift and one mask of the qh bytes away
// (bit k to bit 4 for the low nibbles, bit 4+k for the high ones), or one
// byte test each at AVX-512.
//
// 352 bytes, exactly sixteen plain blocks. A weight's rows are grouped while
// sixteen remain; the last rows % 16 stay plain, after the groups. (A weight
// of fewer than sixteen rows is regrouped eight blocks at a time instead.)
// Every reader of an interleaved weight reads this copy only, so the loader
// can free the plain bytes.
#pragma once

#include <cstddef>
#include <cstdint>

#include "inference/core/ggml_types.h"

namespace qf::infer::cpu::detail {

inline constexpr int k_q5_0x16_rows = 16;

struct block_q5_0x16 {
  fp16_t d[k_q5_0x16_rows];
  uint8_t qh[k_q5_0x16_rows][4];
  uint8_t qs[4][k_q5_0x16_rows][4];
};
static_assert(sizeof(block_q5_0x16) == 16 * sizeof(block_q5_0));

// Element e (0..31) of row r as stored: 0..31 (the value is q - 16).
inline int q5_0x16_quant(const block_q5_0x16& x, int r, int e) {
  const int h = e / 16, k = (e % 16) / 4, i = e % 4;
  return ((x.qs[k][r][i] >> (4 * h)) & 0xF) | ((x.qh[r][i] >> (4 * h + k)) & 1) << 4;
}

// Sixteen rows of nb plain blocks each (row i at src + i * row_bytes) into
// nb interleaved blocks at dst.
void repack_rows_q5_0x16(const uint8_t* src, size_t row_bytes, block_q5_0x16* dst, int64_t nb);
// Row r (0..15) of a group of n columns back to floats, bit-exact to
// dequantize_row_q5_0 on the plain row.
void dequantize_row_q5_0x16(const block_q5_0x16* group, int r, float* y, int64_t n);

}  // namespace qf::infer::cpu::detail
