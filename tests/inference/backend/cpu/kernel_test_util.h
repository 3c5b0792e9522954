// Test helpers: seeded random data and normalized mean squared error.
#pragma once

#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

namespace qf::test {

inline std::vector<float> random_floats(size_t n, uint32_t seed, float scale = 1.0f) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> dist(0.0f, scale);
  std::vector<float> v(n);
  for (auto& x : v) x = dist(rng);
  return v;
}

// sum (a - b)^2 / sum b^2 (b is the reference).
inline double nmse(const float* a, const float* ref, size_t n) {
  double num = 0, den = 0;
  for (size_t i = 0; i < n; ++i) {
    const double d = static_cast<double>(a[i]) - ref[i];
    num += d * d;
    den += static_cast<double>(ref[i]) * ref[i];
  }
  return den > 0 ? num / den : num;
}
inline double nmse(const std::vector<float>& a, const std::vector<float>& ref) {
  return nmse(a.data(), ref.data(), std::min(a.size(), ref.size()));
}

}  // namespace qf::test
