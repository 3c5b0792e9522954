// Q5_0's regrouped copy (repack_q5_0.h), which serves weights of fewer than
// sixteen rows (more are interleaved, test_repack_groups.cpp): the layout holds each element's five
// bits where the header says; a regrouped weight gives the same products and
// rows after its source bytes are overwritten (the loader frees them); and
// matmul through it, at every level, equals the scalar kernel on the plain
// blocks for every row length class (groups only, groups and a tail, with a
// half group, a tail only) and tile width.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <string>

#include "inference/backend/cpu/ops.h"
#include "inference/backend/cpu/quants.h"
#include "inference/backend/cpu/repack_q5_0.h"
#include "tests/inference/backend/cpu/kernel_levels.h"
#include "tests/inference/backend/cpu/kernel_test_util.h"
#include "tests/inference/backend/cpu/repacked_weight_check.h"

using namespace qf::infer;
using namespace qf::infer::cpu;

namespace {

using level_guard = qf::test::kernel_level_guard;

std::vector<uint8_t> quantized(int64_t rows, int64_t cols, uint32_t seed) {
  const auto f = qf::test::random_floats(static_cast<size_t>(rows * cols), seed, 0.5f);
  const size_t rb = *row_size(ggml_type::q5_0, cols);
  std::vector<uint8_t> bytes(rb * static_cast<size_t>(rows));
  for (int64_t r = 0; r < rows; ++r) quantize_row(ggml_type::q5_0, f.data() + r * cols, bytes.data() + r * rb, cols);
  return bytes;
}

// Element j of plain block b, 0..31.
int plain_quant(const block_q5_0& b, int j) {
  const int nibble = j < 16 ? b.qs[j] & 0xF : b.qs[j - 16] >> 4;
  return nibble | static_cast<int>((detail::load_qh(b.qh) >> j) & 1u) << 4;
}

}  // namespace

TEST(repack_q5_0, groups_hold_each_elements_bits_where_the_layout_says) {
  const int64_t nb = 23;  // two groups, a half group and a tail of three
  const auto bytes = quantized(1, nb * 32, 5);
  std::vector<uint8_t> out(bytes.size());
  detail::repack_row_q5_0x8(reinterpret_cast<const block_q5_0*>(bytes.data()), out.data(), nb);
  const auto* plain = reinterpret_cast<const block_q5_0*>(bytes.data());
  const auto* groups = reinterpret_cast<const detail::block_q5_0x8*>(out.data());
  int fifth_bits_set = 0;
  for (int g = 0; g < 2; ++g)
    for (int k = 0; k < 8; ++k) {
      const block_q5_0& b = plain[g * 8 + k];
      EXPECT_EQ(groups[g].d[k], b.d);
      for (int j = 0; j < 32; ++j) {
        // Blocks 0, 1, 4, 5 in the low nibbles of rows 0, 1, 2, 3; blocks 2, 3, 6, 7 in the high ones.
        const int row = 2 * (k / 4) + k % 2, shift = (k % 4) < 2 ? 0 : 4;
        const int q = ((groups[g].qs[row][j] >> shift) & 0xF) | ((groups[g].qh[j] >> k) & 1) << 4;
        ASSERT_EQ(q, plain_quant(b, j)) << "group " << g << " block " << k << " element " << j;
        fifth_bits_set += q >> 4;
      }
    }
  detail::block_q5_0x4 half;
  std::memcpy(&half, out.data() + 2 * sizeof(detail::block_q5_0x8), sizeof half);
  for (int k = 0; k < 4; ++k) {
    const block_q5_0& b = plain[16 + k];
    EXPECT_EQ(half.d[k], b.d);
    for (int j = 0; j < 32; ++j) {
      // Blocks 0, 1 in the low nibbles of rows 0, 1; blocks 2, 3 in the high ones; qh as plain words.
      const uint32_t word = detail::load_qh(half.qh + 4 * k);
      const int q = ((half.qs[k % 2][j] >> (k < 2 ? 0 : 4)) & 0xF) | static_cast<int>((word >> j) & 1u) << 4;
      ASSERT_EQ(q, plain_quant(b, j)) << "half group block " << k << " element " << j;
      fifth_bits_set += q >> 4;
    }
  }
  EXPECT_GT(fifth_bits_set, 100);  // the data exercises the fifth bit
  EXPECT_EQ(std::memcmp(out.data() + 2 * sizeof(detail::block_q5_0x8) + sizeof half, plain + 20, 3 * sizeof(block_q5_0)),
            0);
}

TEST(repack_q5_0, a_regrouped_weight_no_longer_reads_its_source_bytes) {
  const int64_t rows = 9, cols = 13 * 32;  // one group, a half group and one plain block
  auto bytes = quantized(rows, cols, 1);
  const weight_matrix w = prepare_weight(ggml_type::q5_0, rows, cols, bytes.data());
  ASSERT_TRUE(w.repacked);
  EXPECT_FALSE(prepare_weight(ggml_type::q5_0, rows, 7 * 32, bytes.data()).repacked);  // no whole group
  const std::vector<uint8_t> q8(*row_size(ggml_type::q8_0, cols) * rows);
  EXPECT_FALSE(prepare_weight(ggml_type::q8_0, rows, cols, q8.data()).repacked);
  qf::test::expect_reads_only_its_copy(w, bytes);
}

TEST(repack_q5_0, matmul_through_the_groups_equals_the_scalar_kernel_on_plain_blocks) {
  level_guard g;
  thread_pool pool(2);
  const int64_t rows = 13;  // fewer than sixteen: regrouped, not interleaved
  const std::vector<std::string> levels = qf::test::available_kernel_levels();
  for (int64_t nb : {8, 11, 12, 13, 28, 31, 7, 40}) {  // groups, + a tail, + a half group, + both
    const int64_t cols = nb * 32;
    const auto bytes = quantized(rows, cols, static_cast<uint32_t>(nb));
    const weight_matrix w = prepare_weight(ggml_type::q5_0, rows, cols, bytes.data());
    EXPECT_EQ(static_cast<bool>(w.repacked), nb >= 8) << nb;
    weight_matrix plain = w;
    plain.repacked.reset();
    for (int64_t nt : {1, 2, 3, 4, 5}) {
      const auto x = qf::test::random_floats(static_cast<size_t>(cols * nt), 3 + static_cast<uint32_t>(nt));
      std::vector<float> ys(static_cast<size_t>(rows * nt)), yv(ys.size());
      set_kernel_level("scalar");
      matmul(pool, plain, x.data(), nt, ys.data());
      for (const auto& level : levels) {
        set_kernel_level(level);
        matmul(pool, w, x.data(), nt, yv.data());
        EXPECT_LT(qf::test::nmse(yv, ys), 1e-10) << level << ", blocks " << nb << ", tokens " << nt;
      }
    }
  }
}
