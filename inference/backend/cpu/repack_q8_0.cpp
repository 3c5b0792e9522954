// Q8_0 into the sixteen-row groups of repack_q8_0.h (at load time) and back
// to floats (get_rows). Scalar: neither is on the decode path.
#include "inference/backend/cpu/repack_q8_0.h"

#include <cstring>

#include "inference/backend/cpu/quants.h"

namespace qf::infer::cpu::detail {

void repack_rows_q8_0x16(const uint8_t* src, size_t row_bytes, block_q8_0x16* dst, int64_t nb) {
  for (int64_t b = 0; b < nb; ++b) {
    block_q8_0x16 out;
    for (int r = 0; r < k_q8_0x16_rows; ++r) {
      block_q8_0 x;
      std::memcpy(&x, src + r * row_bytes + b * sizeof(block_q8_0), sizeof x);
      out.d[r] = x.d;
      for (int e = 0; e < qk8_0; ++e) out.qs[e / 4][r][e % 4] = static_cast<uint8_t>(x.qs[e] + 128);
    }
    std::memcpy(dst + b, &out, sizeof out);
  }
}

void dequantize_row_q8_0x16(const block_q8_0x16* group, int r, float* y, int64_t n) {
  for (int64_t b = 0; b < n / qk8_0; ++b) {
    const float d = fp16_to_f32(group[b].d[r]);
    for (int e = 0; e < qk8_0; ++e) *y++ = q8_0x16_quant(group[b], r, e) * d;  // as dequantize_row_q8_0
  }
}

}  // namespace qf::infer::cpu::detail
