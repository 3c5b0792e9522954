// The order statistic every benchmark reports its figures with.
#pragma once

#include <algorithm>
#include <cstddef>
#include <vector>

namespace qf::bench {

// The q-quantile (q in [0, 1]) of v: the element of rank round(q (n - 1))
// once sorted, no interpolation; 0 for no values. quantile(v, 0.5) is the
// median (the upper one of an even count).
inline double quantile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<std::size_t>(q * static_cast<double>(v.size() - 1) + 0.5))];
}

}  // namespace qf::bench
