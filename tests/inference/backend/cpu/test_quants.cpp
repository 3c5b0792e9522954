// Dequantization bit-exact on hand-built blocks (the layouts written out
// element by element here, independently of the library's loops), and
// quantize -> dequantize error bounds for each reference quantizer.
#include <gtest/gtest.h>

#include <cstring>

#include "inference/backend/cpu/ops.h"
#include "tests/inference/backend/cpu/kernel_test_util.h"

using namespace qf::infer;
using namespace qf::infer::cpu;

namespace {
// Sub-block scale/min packing of Q4_K/Q5_K, written from the format description.
void pack_scales(const int sc[8], const int mn[8], uint8_t out[12]) {
  std::memset(out, 0, 12);
  for (int j = 0; j < 8; ++j) {
    if (j < 4) {
      out[j] |= static_cast<uint8_t>(sc[j] & 63);
      out[j + 4] |= static_cast<uint8_t>(mn[j] & 63);
    } else {
      out[j + 4] = static_cast<uint8_t>((sc[j] & 15) | ((mn[j] & 15) << 4));
      out[j - 4] |= static_cast<uint8_t>((sc[j] >> 4) << 6);
      out[j] |= static_cast<uint8_t>((mn[j] >> 4) << 6);
    }
  }
}
}  // namespace

TEST(dequantize, q8_0_and_q4_0_blocks) {
  block_q8_0 b8{};
  b8.d = f32_to_fp16(0.25f);
  for (int j = 0; j < 32; ++j) b8.qs[j] = static_cast<int8_t>(j * 8 - 127);
  float y[32];
  dequantize_row(ggml_type::q8_0, &b8, y, 32);
  for (int j = 0; j < 32; ++j) EXPECT_EQ(y[j], (j * 8 - 127) * 0.25f);

  block_q4_0 b4{};
  b4.d = f32_to_fp16(-1.5f);
  for (int j = 0; j < 16; ++j) b4.qs[j] = static_cast<uint8_t>(j | ((15 - j) << 4));
  dequantize_row(ggml_type::q4_0, &b4, y, 32);
  for (int j = 0; j < 16; ++j) {
    EXPECT_EQ(y[j], (j - 8) * -1.5f);
    EXPECT_EQ(y[j + 16], (7 - j) * -1.5f);
  }
}

// Q4_1/Q5_0/Q5_1: element j in the low nibble of qs[j] (j < 16) or the high
// nibble of qs[j - 16]; the 5th bit of element j is bit j of the
// little-endian 32-bit qh. Values chosen to reach 0, 15, 16 and 31.
TEST(dequantize, q4_1_q5_0_q5_1_blocks) {
  int v[32];
  for (int e = 0; e < 32; ++e) v[e] = (e * 11 + 5) % 32;
  v[0] = 0, v[1] = 31, v[17] = 16, v[30] = 15;
  const float d = -0.375f, m = 1.25f;  // exact in fp16
  block_q4_1 b41{};
  block_q5_0 b50{};
  block_q5_1 b51{};
  b41.d = b50.d = b51.d = f32_to_fp16(d);
  b41.m = b51.m = f32_to_fp16(m);
  for (int e = 0; e < 32; ++e) {
    const int byte = e % 16, shift = e < 16 ? 0 : 4;
    b41.qs[byte] |= static_cast<uint8_t>((v[e] & 15) << shift);
    b50.qs[byte] |= static_cast<uint8_t>((v[e] & 15) << shift);
    b51.qs[byte] |= static_cast<uint8_t>((v[e] & 15) << shift);
    if (v[e] & 16) {
      b50.qh[e / 8] |= static_cast<uint8_t>(1 << (e % 8));
      b51.qh[e / 8] |= static_cast<uint8_t>(1 << (e % 8));
    }
  }
  // Two blocks per row, the second a copy, so row offsets are exercised.
  block_q4_1 r41[2] = {b41, b41};
  block_q5_0 r50[2] = {b50, b50};
  block_q5_1 r51[2] = {b51, b51};
  float y41[64], y50[64], y51[64];
  dequantize_row(ggml_type::q4_1, r41, y41, 64);
  dequantize_row(ggml_type::q5_0, r50, y50, 64);
  dequantize_row(ggml_type::q5_1, r51, y51, 64);
  for (int e = 0; e < 64; ++e) {
    const int q = v[e % 32];
    EXPECT_EQ(y41[e], (q & 15) * d + m) << e;
    EXPECT_EQ(y50[e], (q - 16) * d) << e;
    EXPECT_EQ(y51[e], q * d + m) << e;
  }
}

// The reference quantizers give llama.cpp's codes on a hand-checked block:
// Q5_0 maps the signed max to -16 (d = max / -16), Q4_1/Q5_1 span [min, max].
TEST(quantize, q4_1_q5_0_q5_1_codes) {
  float x[32];
  for (int j = 0; j < 32; ++j) x[j] = static_cast<float>(j - 8);  // -8 .. 23, |max| = 23
  block_q5_0 b50;
  quantize_row(ggml_type::q5_0, x, &b50, 32);
  EXPECT_EQ(fp16_to_f32(b50.d), fp16_to_f32(f32_to_fp16(23.0f / -16.0f)));
  float y[32];
  dequantize_row(ggml_type::q5_0, &b50, y, 32);
  EXPECT_EQ(y[31], fp16_to_f32(b50.d) * -16.0f);  // the max gets code 0
  block_q4_1 b41;
  quantize_row(ggml_type::q4_1, x, &b41, 32);
  EXPECT_EQ(fp16_to_f32(b41.m), -8.0f);
  EXPECT_EQ(fp16_to_f32(b41.d), fp16_to_f32(f32_to_fp16(31.0f / 15.0f)));
  EXPECT_EQ(b41.qs[0] & 15, 0);   // the min
  EXPECT_EQ(b41.qs[15] >> 4, 15);  // the max
  block_q5_1 b51;
  quantize_row(ggml_type::q5_1, x, &b51, 32);
  EXPECT_EQ(fp16_to_f32(b51.d), 1.0f);  // (23 - -8) / 31
  dequantize_row(ggml_type::q5_1, &b51, y, 32);
  for (int j = 0; j < 32; ++j) EXPECT_EQ(y[j], x[j]) << j;  // exactly representable
}

TEST(dequantize, q4_k_and_q5_k_blocks) {
  const int sc[8] = {1, 63, 7, 32, 45, 0, 17, 60};
  const int mn[8] = {0, 5, 63, 12, 33, 48, 2, 31};
  const float d = 0.0625f, dmin = 0.03125f;
  block_q4_k b4{};
  block_q5_k b5{};
  b4.d = b5.d = f32_to_fp16(d);
  b4.dmin = b5.dmin = f32_to_fp16(dmin);
  pack_scales(sc, mn, b4.scales);
  pack_scales(sc, mn, b5.scales);
  int v[256];
  for (int e = 0; e < 256; ++e) v[e] = (e * 7 + 3) % 32;  // 5-bit values
  for (int e = 0; e < 256; ++e) {
    // element e: sub-block s = e / 32; byte (s / 2) * 32 + e % 32; low nibble for even s.
    const int s = e / 32, l = e % 32, byte = (s / 2) * 32 + l;
    const int lo4 = v[e] & 15;
    b4.qs[byte] |= static_cast<uint8_t>((s % 2 ? lo4 << 4 : lo4));
    b5.qs[byte] |= static_cast<uint8_t>((s % 2 ? lo4 << 4 : lo4));
    if (v[e] & 16) b5.qh[l] |= static_cast<uint8_t>(1 << s);
  }
  float y4[256], y5[256];
  dequantize_row(ggml_type::q4_k, &b4, y4, 256);
  dequantize_row(ggml_type::q5_k, &b5, y5, 256);
  for (int e = 0; e < 256; ++e) {
    const int s = e / 32;
    const float ds = d * sc[s], ms = dmin * mn[s];
    EXPECT_EQ(y4[e], ds * (v[e] & 15) - ms) << e;
    EXPECT_EQ(y5[e], ds * v[e] - ms) << e;
  }
}

TEST(dequantize, q6_k_block) {
  block_q6_k b{};
  const float d = 0.01171875f;  // exact in fp16
  b.d = f32_to_fp16(d);
  for (int j = 0; j < 16; ++j) b.scales[j] = static_cast<int8_t>(j * 17 - 128);
  int v[256];
  for (int e = 0; e < 256; ++e) v[e] = (e * 13 + 5) % 64;  // 6-bit values, stored with offset 32
  for (int e = 0; e < 256; ++e) {
    // element e: half h = e / 128, quarter q = (e % 128) / 32, l = e % 32.
    const int h = e / 128, q = (e % 128) / 32, l = e % 32;
    const int ql_idx = h * 64 + l + (q & 1) * 32;
    b.ql[ql_idx] |= static_cast<uint8_t>((q >> 1) ? (v[e] & 15) << 4 : (v[e] & 15));
    b.qh[h * 32 + l] |= static_cast<uint8_t>((v[e] >> 4) << (2 * q));
  }
  float y[256];
  dequantize_row(ggml_type::q6_k, &b, y, 256);
  for (int e = 0; e < 256; ++e) EXPECT_EQ(y[e], d * b.scales[e / 16] * (v[e] - 32)) << e;
}

TEST(dequantize, f16_bf16_rows) {
  fp16_t h[3] = {0x3c00, 0xc000, 0x0001};
  bf16_t b[2] = {0x3f80, 0xc040};
  float y[3];
  dequantize_row(ggml_type::f16, h, y, 3);
  EXPECT_EQ(y[0], 1.0f);
  EXPECT_EQ(y[1], -2.0f);
  EXPECT_EQ(y[2], 0x1p-24f);
  dequantize_row(ggml_type::bf16, b, y, 2);
  EXPECT_EQ(y[0], 1.0f);
  EXPECT_EQ(y[1], -3.0f);
}

struct roundtrip_case {
  ggml_type type;
  double max_nmse;
};

class quantize_roundtrip : public ::testing::TestWithParam<roundtrip_case> {};

TEST_P(quantize_roundtrip, nmse_within_bound) {
  const auto [type, bound] = GetParam();
  const int64_t n = 4096;
  auto x = qf::test::random_floats(n, 42);
  for (int64_t i = 0; i < n; i += 97) x[static_cast<size_t>(i)] *= 6.0f;  // some outliers
  std::vector<uint8_t> q(*row_size(type, n));
  quantize_row(type, x.data(), q.data(), n);
  std::vector<float> y(n);
  dequantize_row(type, q.data(), y.data(), n);
  const double e = qf::test::nmse(y, x);
  std::printf("[ nmse ] %s quantize->dequantize: %.3g\n", std::string(traits(type).name).c_str(), e);
  EXPECT_LT(e, bound);
  // Quantizing the dequantized values again is stable (valid blocks).
  std::vector<uint8_t> q2(q.size());
  quantize_row(type, y.data(), q2.data(), n);
  std::vector<float> y2(n);
  dequantize_row(type, q2.data(), y2.data(), n);
  EXPECT_LT(qf::test::nmse(y2, y), bound);
}

INSTANTIATE_TEST_SUITE_P(types, quantize_roundtrip,
                         ::testing::Values(roundtrip_case{ggml_type::f16, 1e-7}, roundtrip_case{ggml_type::bf16, 1e-5},
                                           roundtrip_case{ggml_type::q8_0, 1e-4}, roundtrip_case{ggml_type::q4_0, 2e-2},
                                           roundtrip_case{ggml_type::q4_1, 2e-2}, roundtrip_case{ggml_type::q5_0, 5e-3},
                                           roundtrip_case{ggml_type::q5_1, 5e-3},
                                           roundtrip_case{ggml_type::q4_k, 1e-2}, roundtrip_case{ggml_type::q5_k, 2.5e-3},
                                           roundtrip_case{ggml_type::q6_k, 7e-4}, roundtrip_case{ggml_type::q8_k, 4e-4}));

TEST(quantize, zero_rows_give_zero) {
  for (ggml_type t : {ggml_type::q8_0, ggml_type::q4_0, ggml_type::q4_1, ggml_type::q5_0, ggml_type::q5_1,
                      ggml_type::q4_k, ggml_type::q5_k, ggml_type::q6_k}) {
    std::vector<float> x(256, 0.0f), y(256, 1.0f);
    std::vector<uint8_t> q(*row_size(t, 256));
    quantize_row(t, x.data(), q.data(), 256);
    dequantize_row(t, q.data(), y.data(), 256);
    for (float v : y) ASSERT_EQ(v, 0.0f) << traits(t).name;
  }
}
