// The per-type block decoding that every CUDA matmul/dequantize kernel uses
// (qtraits<T>::part in common.cuh) runs on the host too; this test checks it
// against the CPU reference dequantizer on random blocks, so the decoding is
// verified even on machines without a GPU.
#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "inference/backend/cpu/ops.h"
#include "inference/backend/cuda/common.cuh"

namespace qf::infer::cuda {
namespace {

template <ggml_type T>
void check_type(uint32_t seed) {
  using tr = qtraits<T>;
  const int64_t cols = 1024;
  std::mt19937 rng(seed);
  std::normal_distribution<float> nd(0.0f, 1.0f);
  std::vector<float> src(cols);
  for (auto& v : src) v = nd(rng);
  std::vector<uint8_t> row(*row_size(T, cols));
  cpu::quantize_row(T, src.data(), row.data(), cols);
  std::vector<float> ref(cols), got(cols, -12345.0f);
  cpu::dequantize_row(T, row.data(), ref.data(), cols);
  ASSERT_EQ(size_t(tr::bytes), traits(T).type_size * size_t(tr::qk / traits(T).block_size));
  for (int64_t b = 0; b < cols / tr::qk; ++b)
    for (int p = 0; p < tr::parts; ++p) {
      int idx[8];
      float val[8];
      tr::part(row.data() + b * tr::bytes, p, idx, val);
      for (int j = 0; j < 8; ++j) got[size_t(b * tr::qk + idx[j])] = val[j];
      if constexpr (tr::quad_gap > 0) {  // the two runs of 4 the GEMV loads activations by
        for (int i = 0; i < 4; ++i) {
          ASSERT_EQ(idx[i], tr::quad_a(p) + i) << traits(T).name << " part " << p;
          ASSERT_EQ(idx[4 + i], tr::quad_a(p) + tr::quad_gap + i) << traits(T).name << " part " << p;
        }
        ASSERT_EQ(tr::quad_a(p) % 4, 0);
      }
    }
  for (int64_t i = 0; i < cols; ++i) EXPECT_NEAR(got[size_t(i)], ref[size_t(i)], 1e-5f * (1 + std::abs(ref[size_t(i)])))
      << traits(T).name << " element " << i;
}

TEST(CudaBlockDecode, EveryTypeMatchesCpuDequantizer) {
  check_type<ggml_type::f32>(1);
  check_type<ggml_type::f16>(2);
  check_type<ggml_type::bf16>(3);
  check_type<ggml_type::q8_0>(4);
  check_type<ggml_type::q4_0>(5);
  check_type<ggml_type::q4_1>(9);
  check_type<ggml_type::q5_0>(10);
  check_type<ggml_type::q5_1>(11);
  check_type<ggml_type::q4_k>(6);
  check_type<ggml_type::q5_k>(7);
  check_type<ggml_type::q6_k>(8);
}

}  // namespace
}  // namespace qf::infer::cuda
