// Q6_K into the sixteen-row groups of repack_q6_k.h (at load time) and back
// to floats (get_rows). Scalar: neither is on the decode path.
#include "inference/backend/cpu/repack_q6_k.h"

#include <cstring>

#include "inference/backend/cpu/quants.h"

namespace qf::infer::cpu::detail {

namespace {

// Element e (0..255) of a plain block, 0..63: in each half of 128, the 32
// bytes of ql at 32 (q % 2) hold quarter q's low bits (nibble q / 2), and
// qh's 32 bytes hold all four quarters' high bits (bits 2q..2q+1).
int plain_quant(const block_q6_k& b, int e) {
  const int half = e / 128, q = (e % 128) / 32, l = e % 32;
  const int lo = (b.ql[64 * half + 32 * (q % 2) + l] >> (4 * (q / 2))) & 0xF;
  const int hi = (b.qh[32 * half + l] >> (2 * q)) & 3;
  return lo | hi << 4;
}

}  // namespace

void repack_rows_q6_kx16(const uint8_t* src, size_t row_bytes, block_q6_kx16* dst, int64_t nb) {
  for (int64_t b = 0; b < nb; ++b) {
    block_q6_kx16 out{};
    for (int r = 0; r < k_q6_kx16_rows; ++r) {
      block_q6_k x;
      std::memcpy(&x, src + r * row_bytes + b * sizeof(block_q6_k), sizeof x);
      out.d[r] = x.d;
      for (int j = 0; j < 8; ++j)
        for (int h = 0; h < 2; ++h) {
          out.sc[j][r][h] = x.scales[2 * j + h];
          for (int s = 0; s < 4; ++s)
            for (int i = 0; i < 4; ++i) {
              const int q = plain_quant(x, 32 * j + 16 * h + 4 * s + i);
              out.q[j].ql[s][r][i] = static_cast<uint8_t>(out.q[j].ql[s][r][i] | (q & 0xF) << (4 * h));
              out.q[j].qh[h][r][i] = static_cast<uint8_t>(out.q[j].qh[h][r][i] | (q >> 4) << (2 * s));
            }
        }
    }
    std::memcpy(dst + b, &out, sizeof out);
  }
}

void dequantize_row_q6_kx16(const block_q6_kx16* group, int r, float* y, int64_t n) {
  for (int64_t b = 0; b < n / qk_k; ++b) {
    const block_q6_kx16& x = group[b];
    const float d = fp16_to_f32(x.d[r]);
    for (int e = 0; e < qk_k; ++e)  // the float operations of dequantize_row_q6_k
      *y++ = d * x.sc[e / 32][r][(e % 32) / 16] * (q6_kx16_quant(x, r, e) - 32);
  }
}

}  // namespace qf::infer::cpu::detail
