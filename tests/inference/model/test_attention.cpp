// Host attention: the AVX2 and AVX-512 group kernels against the portable
// one and against a direct double-precision computation.
#include <gtest/gtest.h>

#include <algorithm>

#include <cmath>
#include <random>
#include <vector>

#include "inference/backend/cpu/attention.h"

namespace qf::infer {
namespace {

struct case_data {
  int64_t n_q, n_kv, hd, stride;
  std::vector<float> q;
  std::vector<fp16_t> k, v;
};

case_data make_case(int64_t n_q, int64_t n_kv, int64_t hd, uint32_t seed) {
  std::mt19937 g(seed);
  std::normal_distribution<float> d(0.0f, 1.0f);
  case_data c{n_q, n_kv, hd, 3 * hd, {}, {}, {}};  // 3 KV heads per row; use the middle one
  c.q.resize(n_q * hd);
  for (auto& x : c.q) x = d(g);
  c.k.resize(n_kv * c.stride);
  c.v.resize(n_kv * c.stride);
  for (auto& x : c.k) x = f32_to_fp16(d(g));
  for (auto& x : c.v) x = f32_to_fp16(d(g));
  return c;
}

std::vector<double> direct(const case_data& c, float scale) {
  std::vector<double> out(c.n_q * c.hd, 0.0);
  for (int64_t h = 0; h < c.n_q; ++h) {
    std::vector<double> s(c.n_kv);
    double mx = -1e300, sum = 0;
    for (int64_t j = 0; j < c.n_kv; ++j) {
      double dot = 0;
      for (int64_t i = 0; i < c.hd; ++i) dot += c.q[h * c.hd + i] * fp16_to_f32(c.k[j * c.stride + c.hd + i]);
      s[j] = scale * dot;
      mx = std::max(mx, s[j]);
    }
    for (auto& x : s) sum += (x = std::exp(x - mx));
    for (int64_t j = 0; j < c.n_kv; ++j)
      for (int64_t i = 0; i < c.hd; ++i) out[h * c.hd + i] += s[j] / sum * fp16_to_f32(c.v[j * c.stride + c.hd + i]);
  }
  return out;
}

// Every group kernel, with whether it may run here for a head_dim.
struct group_kernel {
  const char* name;
  bool (*usable)(int64_t head_dim);
  void (*run)(const float*, int64_t, const fp16_t*, const fp16_t*, const kv_cells&, int64_t, int64_t, float, float*,
              float*);
};
const group_kernel k_kernels[] = {
    {"generic", [](int64_t) { return true; }, attend_group_f16_generic},
    {"avx2", attention_avx2_usable, attend_group_f16_avx2},
    {"avx512", attention_avx512_usable, attend_group_f16_avx512},
};

TEST(attention, group_kernels_match_direct) {
  for (int64_t hd : {8, 16, 24, 32, 64, 96, 128}) {
    for (int64_t n_q : {1, 3, 4, 7, 12}) {
      for (int64_t n_kv : {1, 5, 130}) {
        const case_data c = make_case(n_q, n_kv, hd, static_cast<uint32_t>(hd * 1000 + n_q * 10 + n_kv));
        // a large scale makes the softmax peaked (exercises underflow of small exponentials)
        const float scale = (n_kv == 130 ? 4.0f : 1.0f) / std::sqrt(static_cast<float>(hd));
        const auto ref = direct(c, scale);
        for (const group_kernel& gk : k_kernels) {
          if (!gk.usable(hd)) continue;
          std::vector<float> scores(n_q * n_kv), out(n_q * hd, 123.0f);
          gk.run(c.q.data(), n_q, c.k.data() + hd, c.v.data() + hd, kv_cells{c.stride}, n_kv, hd, scale,
                 scores.data(), out.data());
          for (size_t i = 0; i < out.size(); ++i)
            ASSERT_NEAR(out[i], ref[i], 1e-4) << gk.name << " hd " << hd << " n_q " << n_q << " n_kv " << n_kv;
          // The same cells paged: blocks of 4 cells in a shuffled order, read through a block table.
          const int shift = 2;
          const int64_t bc = int64_t{1} << shift, n_blocks = (n_kv + bc - 1) / bc;
          std::vector<int32_t> table(static_cast<size_t>(n_blocks));
          for (int64_t b = 0; b < n_blocks; ++b) table[static_cast<size_t>(b)] = static_cast<int32_t>(n_blocks - 1 - b);
          std::vector<fp16_t> pk(static_cast<size_t>(n_blocks * bc * c.stride)), pv(pk.size());
          for (int64_t j = 0; j < n_kv; ++j) {
            const int64_t cell = (int64_t{table[static_cast<size_t>(j >> shift)]} << shift) | (j & (bc - 1));
            std::copy_n(c.k.begin() + j * c.stride, c.stride, pk.begin() + cell * c.stride);
            std::copy_n(c.v.begin() + j * c.stride, c.stride, pv.begin() + cell * c.stride);
          }
          std::vector<float> paged(n_q * hd, 123.0f);
          gk.run(c.q.data(), n_q, pk.data() + hd, pv.data() + hd, kv_cells{c.stride, table.data(), shift}, n_kv, hd,
                 scale, scores.data(), paged.data());
          for (size_t i = 0; i < out.size(); ++i) ASSERT_EQ(paged[i], out[i]) << gk.name << " paged, hd " << hd;
        }
      }
    }
  }
}

}  // namespace
}  // namespace qf::infer
