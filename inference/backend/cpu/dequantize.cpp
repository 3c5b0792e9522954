// Dequantization of every supported block type, written to reproduce
// llama.cpp's reference dequantizers bit for bit: same element order, same
// float operations in the same order (no fused multiply-add in this file).
#include "inference/backend/cpu/quants.h"

namespace qf::infer::cpu::detail {

void dequantize_row_q8_0(const block_q8_0* x, float* y, int64_t n) {
  for (int64_t i = 0; i < n / qk8_0; ++i) {
    const float d = fp16_to_f32(x[i].d);
    for (int j = 0; j < qk8_0; ++j) y[i * qk8_0 + j] = x[i].qs[j] * d;
  }
}

void dequantize_row_q4_0(const block_q4_0* x, float* y, int64_t n) {
  for (int64_t i = 0; i < n / qk4_0; ++i) {
    const float d = fp16_to_f32(x[i].d);
    for (int j = 0; j < qk4_0 / 2; ++j) {
      const int x0 = (x[i].qs[j] & 0x0F) - 8;
      const int x1 = (x[i].qs[j] >> 4) - 8;
      y[i * qk4_0 + j] = x0 * d;
      y[i * qk4_0 + j + qk4_0 / 2] = x1 * d;
    }
  }
}

void dequantize_row_q4_1(const block_q4_1* x, float* y, int64_t n) {
  for (int64_t i = 0; i < n / qk4_1; ++i) {
    const float d = fp16_to_f32(x[i].d);
    const float m = fp16_to_f32(x[i].m);
    for (int j = 0; j < qk4_1 / 2; ++j) {
      const int x0 = x[i].qs[j] & 0x0F;
      const int x1 = x[i].qs[j] >> 4;
      y[i * qk4_1 + j] = x0 * d + m;
      y[i * qk4_1 + j + qk4_1 / 2] = x1 * d + m;
    }
  }
}

void dequantize_row_q5_0(const block_q5_0* x, float* y, int64_t n) {
  for (int64_t i = 0; i < n / qk5_0; ++i) {
    const float d = fp16_to_f32(x[i].d);
    const uint32_t qh = load_qh(x[i].qh);
    for (int j = 0; j < qk5_0 / 2; ++j) {
      const int h0 = static_cast<int>((qh >> j) & 1u) << 4;
      const int h1 = static_cast<int>((qh >> (j + qk5_0 / 2)) & 1u) << 4;
      const int x0 = ((x[i].qs[j] & 0x0F) | h0) - 16;
      const int x1 = ((x[i].qs[j] >> 4) | h1) - 16;
      y[i * qk5_0 + j] = x0 * d;
      y[i * qk5_0 + j + qk5_0 / 2] = x1 * d;
    }
  }
}

void dequantize_row_q5_1(const block_q5_1* x, float* y, int64_t n) {
  for (int64_t i = 0; i < n / qk5_1; ++i) {
    const float d = fp16_to_f32(x[i].d);
    const float m = fp16_to_f32(x[i].m);
    const uint32_t qh = load_qh(x[i].qh);
    for (int j = 0; j < qk5_1 / 2; ++j) {
      const int x0 = (x[i].qs[j] & 0x0F) | static_cast<int>((qh >> j) & 1u) << 4;
      const int x1 = (x[i].qs[j] >> 4) | static_cast<int>((qh >> (j + qk5_1 / 2)) & 1u) << 4;
      y[i * qk5_1 + j] = x0 * d + m;
      y[i * qk5_1 + j + qk5_1 / 2] = x1 * d + m;
    }
  }
}

void dequantize_row_q4_k(const block_q4_k* x, float* y, int64_t n) {
  for (int64_t i = 0; i < n / qk_k; ++i) {
    const float d = fp16_to_f32(x[i].d);
    const float dmin = fp16_to_f32(x[i].dmin);
    uint8_t sc[8], mn[8];
    unpack_scale_min_k4(x[i].scales, sc, mn);
    const uint8_t* q = x[i].qs;
    for (int j = 0; j < qk_k; j += 64) {
      const int is = j / 32;
      const float d1 = d * sc[is], m1 = dmin * mn[is];
      const float d2 = d * sc[is + 1], m2 = dmin * mn[is + 1];
      for (int l = 0; l < 32; ++l) *y++ = d1 * (q[l] & 0xF) - m1;
      for (int l = 0; l < 32; ++l) *y++ = d2 * (q[l] >> 4) - m2;
      q += 32;
    }
  }
}

void dequantize_row_q5_k(const block_q5_k* x, float* y, int64_t n) {
  for (int64_t i = 0; i < n / qk_k; ++i) {
    const float d = fp16_to_f32(x[i].d);
    const float dmin = fp16_to_f32(x[i].dmin);
    uint8_t sc[8], mn[8];
    unpack_scale_min_k4(x[i].scales, sc, mn);
    const uint8_t* ql = x[i].qs;
    const uint8_t* qh = x[i].qh;
    uint8_t u1 = 1, u2 = 2;
    for (int j = 0; j < qk_k; j += 64) {
      const int is = j / 32;
      const float d1 = d * sc[is], m1 = dmin * mn[is];
      const float d2 = d * sc[is + 1], m2 = dmin * mn[is + 1];
      for (int l = 0; l < 32; ++l) *y++ = d1 * ((ql[l] & 0xF) + (qh[l] & u1 ? 16 : 0)) - m1;
      for (int l = 0; l < 32; ++l) *y++ = d2 * ((ql[l] >> 4) + (qh[l] & u2 ? 16 : 0)) - m2;
      ql += 32;
      u1 = static_cast<uint8_t>(u1 << 2);
      u2 = static_cast<uint8_t>(u2 << 2);
    }
  }
}

void dequantize_row_q6_k(const block_q6_k* x, float* y, int64_t n) {
  for (int64_t i = 0; i < n / qk_k; ++i) {
    const float d = fp16_to_f32(x[i].d);
    const uint8_t* ql = x[i].ql;
    const uint8_t* qh = x[i].qh;
    const int8_t* sc = x[i].scales;
    for (int j = 0; j < qk_k; j += 128) {
      for (int l = 0; l < 32; ++l) {
        const int is = l / 16;
        const int q1 = ((ql[l] & 0xF) | (((qh[l] >> 0) & 3) << 4)) - 32;
        const int q2 = ((ql[l + 32] & 0xF) | (((qh[l] >> 2) & 3) << 4)) - 32;
        const int q3 = ((ql[l] >> 4) | (((qh[l] >> 4) & 3) << 4)) - 32;
        const int q4 = ((ql[l + 32] >> 4) | (((qh[l] >> 6) & 3) << 4)) - 32;
        y[l] = d * sc[is + 0] * q1;
        y[l + 32] = d * sc[is + 2] * q2;
        y[l + 64] = d * sc[is + 4] * q3;
        y[l + 96] = d * sc[is + 6] * q4;
      }
      y += 128;
      ql += 64;
      qh += 32;
      sc += 8;
    }
  }
}

void dequantize_row_q8_k(const block_q8_k* x, float* y, int64_t n) {
  for (int64_t i = 0; i < n / qk_k; ++i)
    for (int j = 0; j < qk_k; ++j) *y++ = x[i].d * x[i].qs[j];
}

}  // namespace qf::infer::cpu::detail
