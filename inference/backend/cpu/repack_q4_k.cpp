// Q4_K into the sixteen-row groups of repack_q4_k.h (at load time) and back
// to floats (get_rows). Scalar: neither is on the decode path.
#include "inference/backend/cpu/repack_q4_k.h"

#include <cstring>

#include "inference/backend/cpu/quants.h"

namespace qf::infer::cpu::detail {

namespace {

// Element e of sub-block j of a plain block: sub-blocks 2c and 2c+1 share
// the 32 bytes at 32c, low and high nibbles.
int plain_quant(const block_q4_k& b, int j, int e) { return (b.qs[32 * (j / 2) + e] >> (4 * (j % 2))) & 0xF; }

}  // namespace

void repack_rows_q4_kx16(const uint8_t* src, size_t row_bytes, block_q4_kx16* dst, int64_t nb) {
  for (int64_t b = 0; b < nb; ++b) {
    block_q4_kx16 out;
    for (int r = 0; r < k_q4_kx16_rows; ++r) {
      block_q4_k x;
      std::memcpy(&x, src + r * row_bytes + b * sizeof(block_q4_k), sizeof x);
      out.d[r] = x.d;
      out.dmin[r] = x.dmin;
      uint8_t sc[8], mn[8];
      unpack_scale_min_k4(x.scales, sc, mn);
      for (int j = 0; j < 8; ++j) out.sc[j][r] = sc[j], out.m[j / 2][r][j % 2] = mn[j];
      for (int j = 0; j < 8; ++j)
        for (int s = 0; s < 4; ++s)
          for (int i = 0; i < 4; ++i)
            out.qs[j][s][r][i] = static_cast<uint8_t>(plain_quant(x, j, 4 * s + i) | plain_quant(x, j, 16 + 4 * s + i) << 4);
    }
    std::memcpy(dst + b, &out, sizeof out);
  }
}

void dequantize_row_q4_kx16(const block_q4_kx16* group, int r, float* y, int64_t n) {
  for (int64_t b = 0; b < n / qk_k; ++b) {
    const block_q4_kx16& x = group[b];
    const float d = fp16_to_f32(x.d[r]), dmin = fp16_to_f32(x.dmin[r]);
    for (int j = 0; j < 8; ++j) {  // the float operations of dequantize_row_q4_k
      const float dj = d * x.sc[j][r], mj = dmin * x.m[j / 2][r][j % 2];
      for (int e = 0; e < 32; ++e) *y++ = dj * q4_kx16_quant(x, r, j, e) - mj;
    }
  }
}

}  // namespace qf::infer::cpu::detail
