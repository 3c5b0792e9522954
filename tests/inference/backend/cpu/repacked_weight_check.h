// Test helper for weights that prepare_weight rearranged into a copy of their
// own (repack_q5_0.h, repack_q4_k.h, repack_q6_k.h): once the copy exists,
// nothing reads the source bytes again, since the loader frees them.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "inference/backend/cpu/ops.h"
#include "tests/inference/backend/cpu/kernel_levels.h"
#include "tests/inference/backend/cpu/kernel_test_util.h"

namespace qf::test {

// Every row (dequantize_weight_row) and every level's matmul against 1 and 3
// tokens give the same results before and after `bytes`, w's source, is
// overwritten, and the rows equal the plain rows' dequantization.
inline void expect_reads_only_its_copy(const infer::cpu::weight_matrix& w, std::vector<uint8_t>& bytes) {
  using namespace infer::cpu;
  kernel_level_guard g;
  thread_pool pool(2);
  const int64_t rows = w.rows, cols = w.cols;
  ASSERT_TRUE(w.repacked);
  const auto x = random_floats(static_cast<size_t>(cols * 3), 2);
  const std::vector<std::string> levels = available_kernel_levels();
  std::vector<float> rows_before(static_cast<size_t>(rows * cols));
  const auto rows_equal = [&](const char* when) {
    for (int64_t r = 0; r < rows; ++r) {
      std::vector<float> d(static_cast<size_t>(cols));
      dequantize_weight_row(w, r, d.data());
      ASSERT_EQ(std::memcmp(d.data(), rows_before.data() + r * cols, d.size() * sizeof(float)), 0) << when << ", row " << r;
    }
  };
  for (int64_t r = 0; r < rows; ++r)
    dequantize_row(w.type, bytes.data() + r * w.row_bytes, rows_before.data() + r * cols, cols);
  rows_equal("before");
  std::vector<std::vector<float>> before;
  for (const auto& level : levels) {
    set_kernel_level(level);
    for (int64_t nt : {1, 3}) {
      before.emplace_back(static_cast<size_t>(rows * nt));
      matmul(pool, w, x.data(), nt, before.back().data());
    }
  }
  std::fill(bytes.begin(), bytes.end(), uint8_t{0xA5});  // what a loader that freed them would leave
  size_t i = 0;
  for (const auto& level : levels) {
    set_kernel_level(level);
    for (int64_t nt : {1, 3}) {
      std::vector<float> y(static_cast<size_t>(rows * nt));
      matmul(pool, w, x.data(), nt, y.data());
      EXPECT_EQ(y, before[i++]) << level << ", tokens " << nt;
    }
  }
  rows_equal("after");
}

}  // namespace qf::test
