// Internal: Q8_0 rows interleaved sixteen at a time for the SIMD kernels
// ("q8_0x16"), the same idea as repack_q4_k.h.
//
// Q8_0 is a whole Q8_0 file and, in a Q4_K_M file whose rows do not fit
// 256-column super-blocks, the output projection: the largest matrix of a
// small model. A plain block dotted on its own spends most of its
// instructions on layout: eight fp16 scales gathered one by one, the signs
// of the weights moved onto the activations (vpdpbusd wants one unsigned
// side), and a horizontal sum per row. With sixteen rows side by side, lane
// r of a 512-bit register is row r: four bytes of a row meet four activation
// bytes broadcast to every lane, the sixteen scales are one 32-byte load and
// the sixteen sums come out as one vector. The quants are stored plus 128
// (0..255), so they are the unsigned side as they are; each block's sum
// starts at -128 times the activation block's quant sum, which takes the
// offset back out exactly. One block (32 columns) of sixteen rows:
//
//   d[16]          each row's fp16 scale
//   qs[8][16][4]   qs[s][r][i]: element 4s+i of row r, plus 128
//
// 544 bytes, exactly sixteen plain blocks. A weight's rows are grouped while
// sixteen remain; the last rows % 16 stay plain, after the groups. Every
// reader of an interleaved weight reads this copy only, so the loader can
// free the plain bytes.
#pragma once

#include <cstddef>
#include <cstdint>

#include "inference/core/ggml_types.h"

namespace qf::infer::cpu::detail {

inline constexpr int k_q8_0x16_rows = 16;

struct block_q8_0x16 {
  fp16_t d[k_q8_0x16_rows];
  uint8_t qs[8][k_q8_0x16_rows][4];
};
static_assert(sizeof(block_q8_0x16) == 16 * sizeof(block_q8_0));

// Element e (0..31) of row r as the signed quant of the plain block.
inline int q8_0x16_quant(const block_q8_0x16& x, int r, int e) { return x.qs[e / 4][r][e % 4] - 128; }

// Sixteen rows of nb plain blocks each (row i at src + i * row_bytes) into
// nb interleaved blocks at dst.
void repack_rows_q8_0x16(const uint8_t* src, size_t row_bytes, block_q8_0x16* dst, int64_t nb);
// Row r (0..15) of a group of n columns back to floats, bit-exact to
// dequantize_row_q8_0 on the plain row.
void dequantize_row_q8_0x16(const block_q8_0x16* group, int r, float* y, int64_t n);

}  // namespace qf::infer::cpu::detail
