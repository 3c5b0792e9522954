// Q8_0's, Q5_0's, Q4_K's and Q6_K's interleaved copies (repack_q8_0.h,
// repack_q5_0x16.h, repack_q4_k.h, repack_q6_k.h): each layout holds each
// element, scale and min where its header says; an
// interleaved weight gives the same products and rows after its source bytes
// are overwritten (the loader frees them); the scalar kernel on the groups is
// bit-identical to the scalar kernel on the plain rows; and matmul through
// the groups, at every level, equals the scalar kernel for every row count
// class (groups only, groups and plain rows, plain rows only), row length and
// tile width.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <string>

#include "inference/backend/cpu/ops.h"
#include "inference/backend/cpu/quants.h"
#include "inference/backend/cpu/repack_q4_k.h"
#include "inference/backend/cpu/repack_q5_0x16.h"
#include "inference/backend/cpu/repack_q6_k.h"
#include "inference/backend/cpu/repack_q8_0.h"
#include "tests/inference/backend/cpu/kernel_levels.h"
#include "tests/inference/backend/cpu/kernel_test_util.h"
#include "tests/inference/backend/cpu/repacked_weight_check.h"

using namespace qf::infer;
using namespace qf::infer::cpu;

namespace {

using level_guard = qf::test::kernel_level_guard;

std::vector<uint8_t> quantized(ggml_type type, int64_t rows, int64_t cols, uint32_t seed) {
  const auto f = qf::test::random_floats(static_cast<size_t>(rows * cols), seed, 0.5f);
  const size_t rb = *row_size(type, cols);
  std::vector<uint8_t> bytes(rb * static_cast<size_t>(rows));
  for (int64_t r = 0; r < rows; ++r) quantize_row(type, f.data() + r * cols, bytes.data() + r * rb, cols);
  return bytes;
}

// Sixteen quantized rows of nb blocks of one type and their interleaved
// groups: plain(r, b) is block b of row r as the file holds it.
template <class Plain, class Group>
struct grouped_rows {
  std::vector<uint8_t> bytes;
  size_t rb = 0;
  std::vector<Group> groups;
  Plain plain(int r, int64_t b) const {
    Plain x;
    std::memcpy(&x, bytes.data() + r * rb + b * sizeof x, sizeof x);
    return x;
  }
};

template <class Plain, class Group>
grouped_rows<Plain, Group> group_rows(ggml_type type, int64_t nb, uint32_t seed,
                                      void (*repack)(const uint8_t*, size_t, Group*, int64_t)) {
  grouped_rows<Plain, Group> g;
  const int64_t cols = nb * traits(type).block_size;
  g.bytes = quantized(type, 16, cols, seed);
  g.rb = *row_size(type, cols);
  g.groups.resize(static_cast<size_t>(nb));
  repack(g.bytes.data(), g.rb, g.groups.data(), nb);
  return g;
}

// The weight types read through sixteen-row groups.
class repack_groups : public testing::TestWithParam<ggml_type> {};

// Matmul through the groups of w (scalar: bit-identical; every other level:
// within rounding) equals the scalar kernel on w's plain rows.
void expect_groups_match_plain(const weight_matrix& w, thread_pool& pool, const std::vector<std::string>& levels,
                               const std::string& what) {
  weight_matrix plain = w;
  plain.repacked.reset();
  for (int64_t nt : {1, 2, 3, 4, 5, 9}) {
    const auto x = qf::test::random_floats(static_cast<size_t>(w.cols * nt), 3 + static_cast<uint32_t>(nt));
    std::vector<float> ys(static_cast<size_t>(w.rows * nt)), yv(ys.size());
    set_kernel_level("scalar");
    matmul(pool, plain, x.data(), nt, ys.data());
    matmul(pool, w, x.data(), nt, yv.data());
    EXPECT_EQ(yv, ys) << "scalar, " << what << ", tokens " << nt;
    for (const auto& level : levels) {
      set_kernel_level(level);
      matmul(pool, w, x.data(), nt, yv.data());
      EXPECT_LT(qf::test::nmse(yv, ys), 1e-10) << level << ", " << what << ", tokens " << nt;
    }
  }
}

}  // namespace

TEST(repack_q4_k, groups_hold_each_element_scale_and_min_where_the_layout_says) {
  const int64_t nb = 3;
  const auto rows = group_rows<block_q4_k>(ggml_type::q4_k, nb, 7, detail::repack_rows_q4_kx16);
  int distinct_mins = 0;
  for (int r = 0; r < 16; ++r)
    for (int64_t b = 0; b < nb; ++b) {
      const block_q4_k x = rows.plain(r, b);
      const auto& g = rows.groups[b];
      EXPECT_EQ(g.d[r], x.d);
      EXPECT_EQ(g.dmin[r], x.dmin);
      uint8_t sc[8], mn[8];
      detail::unpack_scale_min_k4(x.scales, sc, mn);
      for (int j = 0; j < 8; ++j) {
        EXPECT_EQ(g.sc[j][r], sc[j]);
        EXPECT_EQ(g.m[j / 2][r][j % 2], mn[j]);
        distinct_mins += mn[j] != mn[0];
        for (int e = 0; e < 32; ++e) {
          // Plain: sub-blocks 2c, 2c+1 in the low and high nibbles of bytes 32c..32c+31.
          const int plain = (x.qs[32 * (j / 2) + e] >> (4 * (j % 2))) & 0xF;
          // Interleaved: word s = (e % 16) / 4 of lane r, byte e % 4, low nibble for e < 16.
          const int stored = (g.qs[j][(e % 16) / 4][r][e % 4] >> (e < 16 ? 0 : 4)) & 0xF;
          ASSERT_EQ(stored, plain) << "row " << r << " block " << b << " sub-block " << j << " element " << e;
          ASSERT_EQ(detail::q4_kx16_quant(g, r, j, e), plain);
        }
      }
    }
  EXPECT_GT(distinct_mins, 100);  // the data exercises the mins
}

TEST(repack_q4_k, the_activation_sum_pair_is_two_int16_sub_block_sums) {
  const int16_t bsums[16] = {4064, -4064, 100, 27, -1, -2, 3, 4, -2032, -2032, 2032, 2032, 0, 0, 5, -6};
  EXPECT_EQ(detail::q8_k_sum_pair(bsums, 0), static_cast<int32_t>(127u << 16));
  EXPECT_EQ(detail::q8_k_sum_pair(bsums, 1), static_cast<int32_t>((0xFFFDu) | (7u << 16)));
  EXPECT_EQ(detail::q8_k_sum_pair(bsums, 2), static_cast<int32_t>(static_cast<uint16_t>(-4064) | (4064u << 16)));
  EXPECT_EQ(detail::q8_k_sum_pair(bsums, 3), static_cast<int32_t>(0xFFFFu << 16));
}

TEST_P(repack_groups, an_interleaved_weight_no_longer_reads_its_source_bytes) {
  const ggml_type type = GetParam();
  const int64_t rows = 37, cols = 2 * qk_k;  // two groups and five plain rows
  auto bytes = quantized(type, rows, cols, 1);
  const weight_matrix w = prepare_weight(type, rows, cols, bytes.data());
  ASSERT_TRUE(w.repacked);
  // No whole group. (Q5_0 regroups such a weight eight blocks at a time
  // instead: test_repack_q5_0.cpp.)
  if (type != ggml_type::q5_0) {
    EXPECT_FALSE(prepare_weight(type, 15, cols, bytes.data()).repacked);
  }
  qf::test::expect_reads_only_its_copy(w, bytes);
}

TEST_P(repack_groups, matmul_through_the_groups_equals_the_scalar_kernel_on_plain_rows) {
  const ggml_type type = GetParam();
  level_guard g;
  thread_pool pool(2);
  const std::vector<std::string> levels = qf::test::available_kernel_levels();
  for (int64_t rows : {16, 48, 21, 7}) {  // groups, + plain rows, plain rows only
    for (int64_t nb : {1, 6, 35}) {
      const int64_t cols = nb * traits(type).block_size;
      const auto bytes = quantized(type, rows, cols, static_cast<uint32_t>(rows * 100 + nb));
      const weight_matrix w = prepare_weight(type, rows, cols, bytes.data());
      const bool q5_0x8 = type == ggml_type::q5_0 && nb >= 8;  // fewer rows: repack_q5_0.h
      EXPECT_EQ(static_cast<bool>(w.repacked), rows >= 16 || q5_0x8) << rows;
      expect_groups_match_plain(w, pool, levels, "rows " + std::to_string(rows) + ", blocks " + std::to_string(nb));
    }
  }
}

INSTANTIATE_TEST_SUITE_P(types, repack_groups, testing::Values(ggml_type::q8_0, ggml_type::q5_0, ggml_type::q4_k,
                                                         ggml_type::q6_k),
                         [](const testing::TestParamInfo<ggml_type>& info) { return std::string(traits(info.param).name); });

TEST(repack_q6_k, groups_hold_each_element_and_scale_where_the_layout_says) {
  const int64_t nb = 3;
  const auto rows = group_rows<block_q6_k>(ggml_type::q6_k, nb, 11, detail::repack_rows_q6_kx16);
  int high_bits_set = 0;
  for (int r = 0; r < 16; ++r)
    for (int64_t b = 0; b < nb; ++b) {
      const block_q6_k x = rows.plain(r, b);
      const auto& g = rows.groups[b];
      EXPECT_EQ(g.d[r], x.d);
      for (int k = 0; k < 16; ++k) EXPECT_EQ(g.sc[k / 2][r][k % 2], x.scales[k]);
      for (int e = 0; e < qk_k; ++e) {
        // Plain: in each half of 128, quarter q's low bits in nibble q / 2 of
        // ql[64 half + 32 (q % 2) + l], its high bits at 2q of qh[32 half + l].
        const int half = e / 128, q = (e % 128) / 32, l = e % 32;
        const int plain = ((x.ql[64 * half + 32 * (q % 2) + l] >> (4 * (q / 2))) & 0xF) |
                          ((x.qh[32 * half + l] >> (2 * q)) & 3) << 4;
        // Interleaved: 32-column run j, sub-block h of it, word s, byte i.
        const int j = e / 32, h = (e % 32) / 16, s = (e % 16) / 4, i = e % 4;
        const int stored = ((g.q[j].ql[s][r][i] >> (4 * h)) & 0xF) | ((g.q[j].qh[h][r][i] >> (2 * s)) & 3) << 4;
        ASSERT_EQ(stored, plain) << "row " << r << " block " << b << " element " << e;
        ASSERT_EQ(detail::q6_kx16_quant(g, r, e), plain);
        high_bits_set += plain >= 16;
      }
    }
  EXPECT_GT(high_bits_set, 1000);  // the data exercises the high bits
}

TEST(repack_q8_0, groups_hold_each_scale_and_element_plus_128_where_the_layout_says) {
  const int64_t nb = 5;
  const auto rows = group_rows<block_q8_0>(ggml_type::q8_0, nb, 13, detail::repack_rows_q8_0x16);
  int negative = 0;
  for (int r = 0; r < 16; ++r)
    for (int64_t b = 0; b < nb; ++b) {
      const block_q8_0 x = rows.plain(r, b);
      const auto& g = rows.groups[b];
      EXPECT_EQ(g.d[r], x.d);
      for (int e = 0; e < qk8_0; ++e) {
        ASSERT_EQ(g.qs[e / 4][r][e % 4], x.qs[e] + 128) << "row " << r << " block " << b << " element " << e;
        ASSERT_EQ(detail::q8_0x16_quant(g, r, e), x.qs[e]);
        negative += x.qs[e] < 0;
      }
    }
  EXPECT_GT(negative, 1000);  // the data exercises the offset
}

// Q8_0 quants of -128 never come from quantize_row (|q| <= 127), but a file
// may hold them: the groups' offset of 128 and the kernels' sign handling
// must still give the plain rows' products, activations of either sign too.
TEST(repack_q8_0, quants_of_minus_128_and_127_give_the_plain_products) {
  level_guard g;
  thread_pool pool(2);
  const int64_t rows = 37, nb = 9, cols = nb * qk8_0;
  auto bytes = quantized(ggml_type::q8_0, rows, cols, 17);
  const size_t rb = *row_size(ggml_type::q8_0, cols);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t b = 0; b < nb; ++b) {
      auto* qs = reinterpret_cast<int8_t*>(bytes.data() + r * rb + b * sizeof(block_q8_0) + sizeof(fp16_t));
      for (int e = 0; e < qk8_0; ++e)
        if ((r + b + e) % 3 == 0) qs[e] = static_cast<int8_t>((r + e) % 2 ? -128 : 127);
    }
  const weight_matrix w = prepare_weight(ggml_type::q8_0, rows, cols, bytes.data());
  ASSERT_TRUE(w.repacked);
  expect_groups_match_plain(w, pool, qf::test::available_kernel_levels(), "extreme quants");
}

TEST(repack_q5_0, sixteen_row_groups_hold_each_scale_nibble_and_fifth_bit_where_the_layout_says) {
  const int64_t nb = 5;
  const auto rows = group_rows<block_q5_0>(ggml_type::q5_0, nb, 17, detail::repack_rows_q5_0x16);
  int fifth_bits = 0;
  for (int r = 0; r < 16; ++r)
    for (int64_t b = 0; b < nb; ++b) {
      const block_q5_0 x = rows.plain(r, b);
      const auto& g = rows.groups[b];
      EXPECT_EQ(g.d[r], x.d);
      const uint32_t qh = detail::load_qh(x.qh);
      for (int e = 0; e < qk5_0; ++e) {
        // Plain: element e in nibble e / 16 of qs[e % 16], its fifth bit at bit e of qh.
        const int plain = ((x.qs[e % 16] >> (4 * (e / 16))) & 0xF) | static_cast<int>((qh >> e) & 1u) << 4;
        // Interleaved: word k = (e % 16) / 4 of lane r, byte i = e % 4, nibble h = e / 16;
        // the fifth bit at bit 4h + k of qh[r][i].
        const int h = e / 16, k = (e % 16) / 4, i = e % 4;
        const int stored = ((g.qs[k][r][i] >> (4 * h)) & 0xF) | static_cast<int>((g.qh[r][i] >> (4 * h + k)) & 1u) << 4;
        ASSERT_EQ(stored, plain) << "row " << r << " block " << b << " element " << e;
        ASSERT_EQ(detail::q5_0x16_quant(g, r, e), plain);
        fifth_bits += plain >= 16;
      }
    }
  EXPECT_GT(fifth_bits, 1000);  // the data exercises the fifth bits
}
