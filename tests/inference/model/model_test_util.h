// Helpers shared by the engine tests: load a synthetic model, run evals,
// compare logit rows.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "inference/model/context.h"
#include "inference/model/model.h"
#include "tests/inference/model/synthetic.h"

namespace qf::test {

inline std::unique_ptr<infer::model> load_synth(const synth_model& sm, const std::string& name, int n_threads = 2) {
  const std::string path = temp_path(name + ".gguf");
  write_gguf(sm, path);
  infer::model_options mo;
  mo.n_threads = n_threads;
  mo.device = "cpu";
  return infer::model::load(path, mo);
}

inline std::vector<int32_t> some_tokens(int64_t n, int64_t n_vocab, uint32_t seed = 7) {
  std::vector<int32_t> t(n);
  uint32_t s = seed;
  for (auto& x : t) {
    s = s * 1664525u + 1013904223u;
    x = static_cast<int32_t>((s >> 8) % n_vocab);
  }
  return t;
}

// max |a - b| / max(1, max |b|)
inline double rel_diff(std::span<const float> a, std::span<const float> b) {
  EXPECT_EQ(a.size(), b.size());
  double d = 0, m = 1;
  for (size_t i = 0; i < std::min(a.size(), b.size()); ++i) {
    d = std::max(d, std::abs(static_cast<double>(a[i]) - b[i]));
    m = std::max(m, std::abs(static_cast<double>(b[i])));
  }
  return d / m;
}

inline double rel_diff(std::span<const float> a, const std::vector<double>& b) {
  std::vector<float> bf(b.begin(), b.end());
  return rel_diff(a, std::span<const float>(bf));
}

inline std::vector<float> copy(std::span<const float> s) { return {s.begin(), s.end()}; }

}  // namespace qf::test
