// RoPE math: both pair layouts, and rotations compose (the basis of moving a
// cached range to new positions).
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "inference/backend/rope.h"

namespace qf::infer {
namespace {

std::vector<float> rotated(std::vector<float> x, int64_t pos, const rope_params& p, int64_t n_heads, int64_t hd) {
  std::vector<float> cs(p.n_rot);
  rope_cos_sin(pos, p, cs.data());
  rope_apply(x.data(), n_heads, hd, cs.data(), p);
  return x;
}

TEST(rope, norm_rotates_adjacent_pairs) {
  const rope_params p{rope_style::norm, 4, 10000.0f, 1.0f};
  const std::vector<float> x{1, 0, 1, 0};
  const auto y = rotated(x, 3, p, 1, 4);
  // pair 0: theta = 3; pair 1: theta = 3 / 100
  EXPECT_NEAR(y[0], std::cos(3.0), 1e-6);
  EXPECT_NEAR(y[1], std::sin(3.0), 1e-6);
  EXPECT_NEAR(y[2], std::cos(0.03), 1e-6);
  EXPECT_NEAR(y[3], std::sin(0.03), 1e-6);
}

TEST(rope, neox_rotates_halves) {
  const rope_params p{rope_style::neox, 4, 10000.0f, 1.0f};
  const std::vector<float> x{1, 1, 0, 0};
  const auto y = rotated(x, 3, p, 1, 4);
  EXPECT_NEAR(y[0], std::cos(3.0), 1e-6);
  EXPECT_NEAR(y[2], std::sin(3.0), 1e-6);
  EXPECT_NEAR(y[1], std::cos(0.03), 1e-6);
  EXPECT_NEAR(y[3], std::sin(0.03), 1e-6);
}

TEST(rope, partial_rotation_leaves_the_tail) {
  const rope_params p{rope_style::neox, 4, 10000.0f, 1.0f};
  const std::vector<float> x{1, 2, 3, 4, 5, 6};
  const auto y = rotated(x, 7, p, 1, 6);
  EXPECT_EQ(y[4], 5.0f);
  EXPECT_EQ(y[5], 6.0f);
}

TEST(rope, linear_scaling_divides_positions) {
  const rope_params scaled{rope_style::norm, 8, 10000.0f, 0.25f};
  const rope_params plain{rope_style::norm, 8, 10000.0f, 1.0f};
  const std::vector<float> x{1, 2, 3, 4, 5, 6, 7, 8};
  const auto a = rotated(x, 8, scaled, 1, 8), b = rotated(x, 2, plain, 1, 8);
  for (size_t i = 0; i < x.size(); ++i) EXPECT_NEAR(a[i], b[i], 1e-5);
}

TEST(rope, shifts_compose) {
  for (auto style : {rope_style::norm, rope_style::neox}) {
    const rope_params p{style, 16, 1000000.0f, 1.0f};
    std::vector<float> x(32);
    for (size_t i = 0; i < x.size(); ++i) x[i] = std::sin(0.7f * i + 0.1f);
    const auto at_40 = rotated(x, 40, p, 2, 16);
    const auto moved = rotated(at_40, -27, p, 2, 16);  // 40 -> 13
    const auto at_13 = rotated(x, 13, p, 2, 16);
    for (size_t i = 0; i < x.size(); ++i) EXPECT_NEAR(moved[i], at_13[i], 2e-5) << i;
  }
}

}  // namespace
}  // namespace qf::infer
