// Q5_0 into the eight-block groups of repack_q5_0.h (at load time) and back
// to floats (get_rows). Scalar: neither is on the decode path.
#include "inference/backend/cpu/repack_q5_0.h"

#include <bit>
#include <cstring>

#include "inference/backend/cpu/quants.h"

namespace qf::infer::cpu::detail {

namespace {

// spread[b]: byte i = bit i of b (0 or 1).
struct bit_spread {
  uint64_t v[256];
  constexpr bit_spread() : v{} {
    for (int b = 0; b < 256; ++b)
      for (int i = 0; i < 8; ++i) v[b] |= static_cast<uint64_t>((b >> i) & 1) << (8 * i);
  }
};
constexpr bit_spread k_spread;

// Byte j of a nibble row: element j of block lo in the low nibble, of block
// hi in the high one.
void pack_nibble_row(const block_q5_0& lo, const block_q5_0& hi, uint8_t* row) {
  for (int j = 0; j < 16; ++j) {  // a plain block: elements 0-15 in the low nibbles, 16-31 in the high
    row[j] = static_cast<uint8_t>((lo.qs[j] & 0x0F) | (hi.qs[j] << 4));
    row[j + 16] = static_cast<uint8_t>((lo.qs[j] >> 4) | (hi.qs[j] & 0xF0));
  }
}

}  // namespace

// Byte loops the compiler vectorizes, and a table for the bit transpose:
// a model's load time, not its decode, pays for this.
void repack_row_q5_0x8(const block_q5_0* src, uint8_t* dst, int64_t nb) {
  const int64_t groups = nb / k_q5_0x8_blocks;
  for (int64_t g = 0; g < groups; ++g) {
    const block_q5_0* b = src + g * k_q5_0x8_blocks;
    block_q5_0x8 out;
    uint64_t qh[4] = {0, 0, 0, 0};  // bytes 8i..8i+7 of out.qh
    for (int k = 0; k < k_q5_0x8_blocks; ++k) {
      out.d[k] = b[k].d;
      const uint32_t h = load_qh(b[k].qh);
      for (int i = 0; i < 4; ++i) qh[i] |= k_spread.v[(h >> (8 * i)) & 0xFF] << k;
    }
    static_assert(std::endian::native == std::endian::little);  // byte j of qh[] is element j
    std::memcpy(out.qh, qh, sizeof qh);
    for (int p = 0; p < k_q5_0x8_blocks / 2; ++p) {
      const int k = 4 * (p / 2) + p % 2;  // the block in row p's low nibbles; k + 2 in the high ones
      static_assert(q5_0x8_row(2) == 0 && q5_0x8_shift(2) == 4 && q5_0x8_row(5) == 3 && q5_0x8_shift(5) == 0);
      pack_nibble_row(b[k], b[k + 2], out.qs[p]);
    }
    std::memcpy(dst + g * sizeof(block_q5_0x8), &out, sizeof out);
  }
  const q5_0x8_row_layout lay(nb);
  if (lay.half) {
    const int64_t first = groups * k_q5_0x8_blocks;
    const block_q5_0* b = src + first;
    block_q5_0x4 out;
    for (int k = 0; k < 4; ++k) out.d[k] = b[k].d, std::memcpy(out.qh + 4 * k, b[k].qh, 4);
    for (int p = 0; p < 2; ++p) pack_nibble_row(b[p], b[p + 2], out.qs[p]);  // row p: block p low, p + 2 high
    std::memcpy(dst + q5_0x8_row_layout::offset(first), &out, sizeof out);
  }
  std::memcpy(dst + q5_0x8_row_layout::offset(lay.plain), src + lay.plain,
              static_cast<size_t>(nb - lay.plain) * sizeof(block_q5_0));
}

void dequantize_row_q5_0x8(const uint8_t* row, float* y, int64_t n) {
  const int64_t nb = n / 32, groups = nb / k_q5_0x8_blocks;
  for (int64_t g = 0; g < groups; ++g) {
    block_q5_0x8 grp;
    std::memcpy(&grp, row + g * sizeof grp, sizeof grp);
    for (int k = 0; k < k_q5_0x8_blocks; ++k) {
      const float d = fp16_to_f32(grp.d[k]);
      for (int j = 0; j < 32; ++j) *y++ = static_cast<float>(q5_0x8_quant(grp, k, j) - 16) * d;
    }
  }
  const q5_0x8_row_layout lay(nb);
  if (lay.half) {
    block_q5_0x4 half;
    std::memcpy(&half, lay.half_group(row), sizeof half);
    for (int k = 0; k < 4; ++k) {
      const float d = fp16_to_f32(half.d[k]);
      for (int j = 0; j < 32; ++j) *y++ = static_cast<float>(q5_0x4_quant(half, k, j) - 16) * d;
    }
  }
  dequantize_row_q5_0(lay.plain_blocks(row), y, (nb - lay.plain) * 32);
}

}  // namespace qf::infer::cpu::detail
