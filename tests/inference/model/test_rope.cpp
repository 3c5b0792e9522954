// RoPE math: both pair layouts, YaRN, and rotations compose (the basis of
// moving a cached range to new positions).
#include <gtest/gtest.h>

#include <algorithm>
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

// YaRN's correction range, as ggml computes it: n_rot 128, base 1e6, original
// context 32768, betas 32 / 1 give floor(23.60) = 23 and ceil(39.65) = 40.
TEST(rope, yarn_corr_dims_follow_the_formula) {
  float low = 0, high = 0;
  yarn_corr_dims(128, 32768, 1000000.0f, 32.0f, 1.0f, low, high);
  auto dim = [](double turns) { return 128 * std::log(32768 / (turns * 2 * M_PI)) / (2 * std::log(1e6)); };
  EXPECT_EQ(low, std::floor(dim(32)));
  EXPECT_EQ(high, std::ceil(dim(1)));
  EXPECT_EQ(low, 23.0f);
  EXPECT_EQ(high, 40.0f);
  yarn_corr_dims(16, 1 << 20, 10.0f, 32.0f, 1.0f, low, high);  // clamped to [0, n_rot - 1]
  EXPECT_EQ(high, 15.0f);
}

// Pair by pair: below the range the angle is the original one, above it the
// interpolated one (pos / factor), and cos/sin carry mscale; a shift is a
// pure rotation, so rotate-then-shift equals rotating at the sum.
TEST(rope, yarn_ramps_between_extrapolation_and_interpolation) {
  rope_params p{rope_style::neox, 16, 10000.0f, 0.25f};
  p.ext_factor = 1;
  p.attn_factor = 1;
  p.corr_low = 2;
  p.corr_high = 5;
  std::vector<float> cs(16);
  rope_cos_sin(100, p, cs.data());
  const double mscale = 1 + 0.1 * std::log(4.0);
  EXPECT_FLOAT_EQ(rope_mscale(p), static_cast<float>(mscale));
  for (int i = 0; i < 8; ++i) {
    const double freq = std::pow(10000.0, -2.0 * i / 16), ramp = 1 - std::clamp((i - 2.0) / 3.0, 0.0, 1.0);
    const double theta = 100 * freq * 0.25 * (1 - ramp) + 100 * freq * ramp;
    EXPECT_NEAR(cs[2 * i], std::cos(theta) * mscale, 2e-5) << i;
    EXPECT_NEAR(cs[2 * i + 1], std::sin(theta) * mscale, 2e-5) << i;
  }
  std::vector<float> x(32);
  for (size_t i = 0; i < x.size(); ++i) x[i] = std::cos(0.3f * i);
  auto at = [&](int64_t pos, std::vector<float> v, bool shift) {
    std::vector<float> t(16);
    rope_cos_sin(pos, p, t.data(), nullptr, shift);
    rope_apply(v.data(), 2, 16, t.data(), p);
    return v;
  };
  const auto moved = at(-17, at(40, x, false), true), direct = at(23, x, false);
  for (size_t i = 0; i < x.size(); ++i) EXPECT_NEAR(moved[i], direct[i], 5e-5) << i;
}

}  // namespace
}  // namespace qf::infer
