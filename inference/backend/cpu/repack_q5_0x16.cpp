// Q5_0 into the sixteen-row groups of repack_q5_0x16.h (at load time) and
// back to floats (get_rows). Scalar: neither is on the decode path.
#include "inference/backend/cpu/repack_q5_0x16.h"

#include <cstring>

#include "inference/backend/cpu/quants.h"

namespace qf::infer::cpu::detail {

void repack_rows_q5_0x16(const uint8_t* src, size_t row_bytes, block_q5_0x16* dst, int64_t nb) {
  for (int64_t b = 0; b < nb; ++b) {
    block_q5_0x16 out{};
    for (int r = 0; r < k_q5_0x16_rows; ++r) {
      block_q5_0 x;
      std::memcpy(&x, src + r * row_bytes + b * sizeof(block_q5_0), sizeof x);
      out.d[r] = x.d;
      const uint32_t qh = load_qh(x.qh);  // bit e: the fifth bit of element e
      for (int k = 0; k < 4; ++k)
        for (int i = 0; i < 4; ++i) {
          out.qs[k][r][i] = x.qs[4 * k + i];
          for (int h = 0; h < 2; ++h)
            out.qh[r][i] |= static_cast<uint8_t>(((qh >> (16 * h + 4 * k + i)) & 1u) << (4 * h + k));
        }
    }
    std::memcpy(dst + b, &out, sizeof out);
  }
}

void dequantize_row_q5_0x16(const block_q5_0x16* group, int r, float* y, int64_t n) {
  for (int64_t b = 0; b < n / qk5_0; ++b) {
    const float d = fp16_to_f32(group[b].d[r]);
    for (int e = 0; e < qk5_0; ++e) *y++ = (q5_0x16_quant(group[b], r, e) - 16) * d;  // as dequantize_row_q5_0
  }
}

}  // namespace qf::infer::cpu::detail
