// Kernels: every available level (scalar, AVX2, AVX-512) against the scalar
// reference with an NMSE bound per type; matmul against a naive float
// reference on dequantized weights (this bound is the activation
// quantization error); decode (GEMV) vs prefill (GEMM) paths; elementwise ops.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <string>

#include "inference/backend/backend.h"
#include "inference/backend/cpu/ops.h"
#include "tests/inference/backend/cpu/kernel_levels.h"
#include "tests/inference/backend/cpu/kernel_test_util.h"

using namespace qf::infer;
using namespace qf::infer::cpu;

namespace {

using level_guard = qf::test::kernel_level_guard;
using qf::test::kernel_level_available;

struct weights {
  std::vector<uint8_t> bytes;
  std::vector<float> dequant;  // rows * cols
  weight_matrix w;
};

weights make_weights(ggml_type t, int64_t rows, int64_t cols, uint32_t seed) {
  weights out;
  auto f = qf::test::random_floats(static_cast<size_t>(rows * cols), seed, 0.5f);
  const size_t rb = *row_size(t, cols);
  out.bytes.resize(rb * static_cast<size_t>(rows));
  out.dequant.resize(f.size());
  for (int64_t r = 0; r < rows; ++r) {
    quantize_row(t, f.data() + r * cols, out.bytes.data() + r * rb, cols);
    dequantize_row(t, out.bytes.data() + r * rb, out.dequant.data() + r * cols, cols);
  }
  out.w = prepare_weight(t, rows, cols, out.bytes.data());
  return out;
}

std::vector<float> naive(const weights& w, const std::vector<float>& x, int64_t nt) {
  const int64_t rows = w.w.rows, cols = w.w.cols;
  std::vector<float> y(static_cast<size_t>(rows * nt));
  for (int64_t t = 0; t < nt; ++t)
    for (int64_t r = 0; r < rows; ++r) {
      double s = 0;
      for (int64_t c = 0; c < cols; ++c) s += static_cast<double>(w.dequant[r * cols + c]) * x[t * cols + c];
      y[t * rows + r] = static_cast<float>(s);
    }
  return y;
}

}  // namespace

struct type_case {
  ggml_type type;
  double vs_float;  // matmul vs float reference on dequantized weights (activation quantization)
  double vs_scalar; // SIMD level vs scalar reference kernel
};

class kernel_types : public ::testing::TestWithParam<type_case> {};

TEST_P(kernel_types, every_level_matches_scalar_and_float_reference) {
  level_guard g;
  const auto tc = GetParam();
  const bool k_quant = tc.type == ggml_type::q4_k || tc.type == ggml_type::q5_k || tc.type == ggml_type::q6_k;
  // 11 and 29 blocks of 32: odd tails, and for Q5_0 one and three regrouped
  // eight-block groups before them.
  for (const int64_t cols : k_quant ? std::vector<int64_t>{768} : std::vector<int64_t>{352, 928}) {
    const int64_t rows = 37;
    auto w = make_weights(tc.type, rows, cols, 7);
    thread_pool pool(2);
    for (int64_t nt : {1, 3, 9}) {
      auto x = qf::test::random_floats(static_cast<size_t>(cols * nt), 11 + static_cast<uint32_t>(nt));
      auto ref = naive(w, x, nt);
      set_kernel_level("scalar");
      std::vector<float> ys(ref.size());
      matmul(pool, w.w, x.data(), nt, ys.data());
      const double e_float = qf::test::nmse(ys, ref);
      EXPECT_LT(e_float, tc.vs_float) << traits(tc.type).name << " scalar vs float, nt=" << nt;
      for (const char* level : {"avx2", "avx512"}) {
        if (!kernel_level_available(level)) {
          std::printf("[ skip ] %s level not supported by this CPU\n", level);
          continue;
        }
        set_kernel_level(level);
        ASSERT_EQ(kernel_level(), level);
        std::vector<float> yl(ref.size());
        matmul(pool, w.w, x.data(), nt, yl.data());
        const double e = qf::test::nmse(yl, ys);
        EXPECT_LT(e, tc.vs_scalar) << traits(tc.type).name << " " << level << " vs scalar, nt=" << nt;
        if (nt == 1)
          std::printf("[ nmse ] %s %s vs scalar %.3g; scalar vs float reference %.3g (%lld columns)\n",
                      std::string(traits(tc.type).name).c_str(), level, e, e_float,
                      static_cast<long long>(cols));
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(types, kernel_types,
                         ::testing::Values(type_case{ggml_type::f32, 1e-12, 1e-10}, type_case{ggml_type::f16, 1e-12, 1e-10},
                                           type_case{ggml_type::bf16, 1e-12, 1e-10}, type_case{ggml_type::q8_0, 2e-4, 1e-9},
                                           type_case{ggml_type::q4_0, 2e-4, 1e-9}, type_case{ggml_type::q4_1, 2e-4, 1e-9},
                                           type_case{ggml_type::q5_0, 2e-4, 1e-9}, type_case{ggml_type::q5_1, 2e-4, 1e-9},
                                           type_case{ggml_type::q4_k, 5e-4, 1e-9},
                                           type_case{ggml_type::q5_k, 5e-4, 1e-9}, type_case{ggml_type::q6_k, 5e-4, 1e-9}));

TEST(matmul, decode_and_prefill_paths_agree) {
  level_guard g;
  thread_pool pool(2);
  for (ggml_type t : {ggml_type::q8_0, ggml_type::q4_1, ggml_type::q5_0, ggml_type::q5_1, ggml_type::q4_k,
                      ggml_type::q6_k, ggml_type::f16}) {
    auto w = make_weights(t, 70, 512, 3);
    const int64_t nt = 11;
    auto x = qf::test::random_floats(static_cast<size_t>(512 * nt), 5);
    std::vector<float> prefill(static_cast<size_t>(70 * nt)), decode(prefill.size());
    matmul(pool, w.w, x.data(), nt, prefill.data());
    for (int64_t i = 0; i < nt; ++i) matmul(pool, w.w, x.data() + i * 512, 1, decode.data() + i * 70);
    EXPECT_LT(qf::test::nmse(prefill, decode), 1e-10) << traits(t).name;
    EXPECT_LT(qf::test::nmse(prefill, naive(w, x, nt)), 5e-4) << traits(t).name;
  }
}

// A Q8_0 matmul computes, by definition (llama.cpp's vec_dot_type of Q8_0 is
// Q8_0), the product of the weights with the activations as a Q8_0 row
// holds them: per block of 32, d = max|x| / 127 (stored as F16) and quants
// round(x / d). Against that product in double, every level may differ only
// by float rounding (1e-5 of the sum of the blocks' magnitudes); the exact
// product differs by the activation rounding itself, ~1e-3 of it. Blocks of
// very different magnitudes and an all-zero block; sixteen-row groups and
// single rows; one token (GEMV) and several (GEMM).
TEST(matmul, q8_0_is_the_exact_product_of_the_rounded_activations) {
  level_guard g;
  thread_pool pool(2);
  const int64_t rows = 37, cols = 928, nb = cols / 32;
  auto w = make_weights(ggml_type::q8_0, rows, cols, 21);
  for (const int64_t nt : {1, 3, 9}) {
    auto x = qf::test::random_floats(static_cast<size_t>(cols * nt), 40 + static_cast<uint32_t>(nt));
    const float block_scale[] = {1.0f, 1e-3f, 50.0f, 0.0f, 0.2f};
    for (int64_t t = 0; t < nt; ++t)
      for (int64_t b = 0; b < nb; ++b)
        for (int64_t j = 0; j < 32; ++j) x[(t * nb + b) * 32 + j] *= block_scale[(t + b) % 5];
    // The definition, in double after the float32 steps that define the quants.
    std::vector<double> ref(static_cast<size_t>(rows * nt)), mag(ref.size());
    int ties = 0;
    for (int64_t t = 0; t < nt; ++t)
      for (int64_t b = 0; b < nb; ++b) {
        const float* xb = x.data() + (t * nb + b) * 32;
        float amax = 0;
        for (int j = 0; j < 32; ++j) amax = std::max(amax, std::fabs(xb[j]));
        const float d = amax / 127.0f, id = d != 0.0f ? 1.0f / d : 0.0f;
        const double dh = fp16_to_f32(f32_to_fp16(d));
        int q[32];
        for (int j = 0; j < 32; ++j) {
          const float v = xb[j] * id;
          ties += v - std::floor(v) == 0.5f;  // would round differently (even vs away from zero)
          q[j] = static_cast<int>(std::nearbyint(v));
        }
        for (int64_t r = 0; r < rows; ++r) {
          double s = 0;
          for (int j = 0; j < 32; ++j) s += q[j] * static_cast<double>(w.dequant[r * cols + b * 32 + j]);
          ref[t * rows + r] += dh * s;
          mag[t * rows + r] += std::fabs(dh * s);
        }
      }
    ASSERT_EQ(ties, 0) << "the test data has a rounding tie";
    std::vector<float> exact = naive(w, x, nt);
    double exact_dev = 0;
    for (size_t i = 0; i < ref.size(); ++i) exact_dev = std::max(exact_dev, std::fabs(exact[i] - ref[i]) / mag[i]);
    EXPECT_GT(exact_dev, 1e-4) << "the activation rounding must be visible against the exact product";
    for (const std::string& level : qf::test::available_kernel_levels()) {
      set_kernel_level(level);
      std::vector<float> y(ref.size());
      matmul(pool, w.w, x.data(), nt, y.data());
      for (size_t i = 0; i < ref.size(); ++i)
        ASSERT_LE(std::fabs(y[i] - ref[i]), 1e-5 * mag[i]) << level << " nt=" << nt << " row " << i % rows;
    }
  }
}

TEST(matmul, thread_counts_give_identical_results) {
  auto w = make_weights(ggml_type::q4_0, 333, 256, 9);
  auto x = qf::test::random_floats(256 * 5, 1);
  std::vector<float> a(333 * 5), b(333 * 5);
  thread_pool one(1), three(3);
  matmul(one, w.w, x.data(), 5, a.data());
  matmul(three, w.w, x.data(), 5, b.data());
  EXPECT_EQ(a, b);
}

// A cancelled stop token makes every thread stop taking row blocks: with it
// cancelled from the start nothing is written; a token never cancelled
// changes nothing.
TEST(matmul, stops_taking_rows_once_cancelled) {
  auto w = make_weights(ggml_type::q8_0, 4000, 256, 4);
  thread_pool pool(2);
  for (int64_t nt : {1, 6}) {
    auto x = qf::test::random_floats(static_cast<size_t>(256 * nt), 2);
    std::vector<float> full(static_cast<size_t>(4000 * nt)), y(full.size(), -12345.0f);
    matmul(pool, w.w, x.data(), nt, full.data());
    qf::cancel_source src;
    const qf::cancel_token live = src.token();
    std::vector<float> same(full.size());
    matmul(pool, w.w, x.data(), nt, same.data(), &live);
    EXPECT_EQ(same, full) << nt;
    src.cancel(qf::cancel_reason::cancelled);
    matmul(pool, w.w, x.data(), nt, y.data(), &live);
    EXPECT_EQ(std::count(y.begin(), y.end(), -12345.0f), static_cast<long>(y.size())) << nt;
  }
}

// A token whose deadline has passed stops the matmul the same way (no thread
// cancels it: the polls read the clock); a deadline far ahead changes nothing.
TEST(matmul, stops_taking_rows_past_the_tokens_deadline) {
  auto w = make_weights(ggml_type::q8_0, 4000, 256, 4);
  thread_pool pool(2);
  const auto now = qf::cancel_token::clock::now();
  const qf::cancel_token later = qf::cancel_token().with_deadline(now + std::chrono::hours(1));
  const qf::cancel_token passed = qf::cancel_token().with_deadline(now - std::chrono::milliseconds(1));
  for (int64_t nt : {1, 6}) {
    auto x = qf::test::random_floats(static_cast<size_t>(256 * nt), 2);
    std::vector<float> full(static_cast<size_t>(4000 * nt)), same(full.size()), y(full.size(), -12345.0f);
    matmul(pool, w.w, x.data(), nt, full.data());
    matmul(pool, w.w, x.data(), nt, same.data(), &later);
    EXPECT_EQ(same, full) << nt;
    matmul(pool, w.w, x.data(), nt, y.data(), &passed);
    EXPECT_EQ(std::count(y.begin(), y.end(), -12345.0f), static_cast<long>(y.size())) << nt;
  }
}

// matmul_many gives each matrix exactly what matmul gives it, whatever the
// mix of activation formats (Q8_0 blocks, Q8_K blocks, floats), row counts
// (grouped rows and single rows, fewer rows than a chunk), matrices per call
// (more than one job takes) and threads; a cancelled token stops it writing.
TEST(matmul, many_matches_one_at_a_time) {
  level_guard g;
  const int64_t cols = 512;
  std::vector<weights> ws;
  ws.push_back(make_weights(ggml_type::q8_0, 700, cols, 11));
  ws.push_back(make_weights(ggml_type::q4_k, 64, cols, 12));
  ws.push_back(make_weights(ggml_type::f16, 37, cols, 13));
  ws.push_back(make_weights(ggml_type::q5_0, 9, cols, 14));
  ws.push_back(make_weights(ggml_type::q6_k, 300, cols, 15));
  ws.push_back(make_weights(ggml_type::q8_0, 5000, cols, 16));
  std::vector<const weight_matrix*> mats;
  for (const auto& w : ws) mats.push_back(&w.w);
  for (int threads : {1, 2, 3}) {
    thread_pool pool(threads);
    for (int64_t nt : {1, 3}) {
      auto x = qf::test::random_floats(static_cast<size_t>(cols * nt), 7);
      for (size_t n : {size_t{1}, size_t{2}, size_t{3}, mats.size()}) {
        std::vector<std::vector<float>> want, got;
        std::vector<float*> ys;
        for (size_t i = 0; i < n; ++i) {
          want.emplace_back(static_cast<size_t>(mats[i]->rows * nt));
          got.emplace_back(want.back().size(), -1.0f);
          matmul(pool, *mats[i], x.data(), nt, want.back().data());
        }
        for (auto& y : got) ys.push_back(y.data());
        matmul_many(pool, std::span(mats.data(), n), x.data(), nt, ys);
        for (size_t i = 0; i < n; ++i)
          EXPECT_EQ(got[i], want[i]) << threads << " threads, " << nt << " tokens, matrix " << i << " of " << n;
      }
      qf::cancel_source src;
      src.cancel(qf::cancel_reason::cancelled);
      const qf::cancel_token stop = src.token();
      std::vector<std::vector<float>> ys(mats.size());
      std::vector<float*> yp;
      for (size_t i = 0; i < mats.size(); ++i) {
        ys[i].assign(static_cast<size_t>(mats[i]->rows * nt), -12345.0f);
        yp.push_back(ys[i].data());
      }
      matmul_many(pool, mats, x.data(), nt, yp, &stop);
      for (const auto& y : ys) EXPECT_EQ(std::count(y.begin(), y.end(), -12345.0f), static_cast<long>(y.size()));
    }
  }
  std::vector<float> x(256), y(64);
  auto other = make_weights(ggml_type::q8_0, 64, 256, 17);
  const weight_matrix* two[] = {mats[0], &other.w};
  float* outs[] = {y.data(), y.data()};
  thread_pool pool(2);
  EXPECT_THROW(matmul_many(pool, two, x.data(), 1, outs), std::invalid_argument);  // columns differ
  EXPECT_THROW(matmul_many(pool, two, x.data(), 1, std::span(outs, 1)), std::invalid_argument);
}

// A gemv_order learns the order of one-token jobs on a pool with workers:
// once a decode step has run, each job names the one that followed it (the
// last one the first), a different job relearns from there, and reading
// ahead for the next job never changes a result. The weights read ahead may go away while
// a worker still reads them (it holds a reference; ASan checks).
TEST(matmul, learns_the_decode_order_and_reads_ahead_unchanged) {
  const int64_t cols = 512;
  std::vector<weights> ws;
  ws.push_back(make_weights(ggml_type::q8_0, 700, cols, 21));
  ws.push_back(make_weights(ggml_type::q4_k, 64, cols, 22));
  ws.push_back(make_weights(ggml_type::q6_k, 300, cols, 23));
  ws.push_back(make_weights(ggml_type::f16, 37, cols, 24));  // no copy: not read ahead
  ws.push_back(make_weights(ggml_type::q8_0, 5000, cols, 25));
  const weight_matrix *a = &ws[0].w, *b = &ws[1].w, *c = &ws[2].w, *d = &ws[3].w, *e = &ws[4].w;
  using job = std::vector<const weight_matrix*>;
  const std::vector<job> step = {{a}, {b, c}, {d}, {e}};
  const auto x = qf::test::random_floats(static_cast<size_t>(cols), 9);
  const auto run = [&](thread_pool& pool, const job& j, gemv_order* order) {
    std::vector<std::vector<float>> ys;
    std::vector<float*> yp;
    for (const auto* w : j) ys.emplace_back(static_cast<size_t>(w->rows), -1.0f), yp.push_back(ys.back().data());
    if (j.size() == 1) matmul(pool, *j[0], x.data(), 1, yp[0], nullptr, order);
    else matmul_many(pool, j, x.data(), 1, yp, nullptr, order);
    return ys;
  };
  for (int threads : {1, 2, 3}) {
    thread_pool pool(threads);
    std::vector<std::vector<std::vector<float>>> want;
    for (const auto& j : step) want.push_back(run(pool, j, nullptr));
    gemv_order order;
    EXPECT_TRUE(order.next_job().empty());
    for (int pass = 0; pass < 3; ++pass)
      for (size_t i = 0; i < step.size(); ++i) {
        EXPECT_EQ(run(pool, step[i], &order), want[i]) << threads << " threads, pass " << pass << ", job " << i;
        if (threads == 1) {
          EXPECT_TRUE(order.next_job().empty());  // no worker to read ahead: nothing recorded
        } else if (pass > 0) {
          EXPECT_EQ(order.next_job(), step[(i + 1) % step.size()]) << threads << " threads, pass " << pass << ", job " << i;
        }
      }
    if (threads == 1) continue;
    run(pool, {a}, &order);
    run(pool, {d}, &order);  // not {b, c}: relearn
    EXPECT_EQ(order.next_job(), job{a});
    run(pool, {e}, &order);
    run(pool, {a}, &order);
    EXPECT_EQ(order.next_job(), job{d});
    order.enabled = false;
    run(pool, {e}, &order);  // not recorded
    EXPECT_EQ(order.next_job(), job{d});
    order.enabled = true;
  }
  // The workers read ahead for {b, c} after a; then b and c go away.
  thread_pool pool(2);
  const auto want_e = run(pool, {e}, nullptr);
  gemv_order order;
  for (int pass = 0; pass < 2; ++pass)
    for (const auto& j : step) run(pool, j, &order);
  run(pool, {a}, &order);
  ws[1] = make_weights(ggml_type::q8_0, 16, cols, 26);
  ws[2] = make_weights(ggml_type::q8_0, 16, cols, 27);
  EXPECT_EQ(run(pool, {e}, &order), want_e);
}

TEST(matmul, rejects_unsupported) {
  EXPECT_THROW(prepare_weight(ggml_type::q8_k, 1, 256, nullptr), std::invalid_argument);
  EXPECT_THROW(prepare_weight(ggml_type::q4_k, 1, 896, nullptr), std::invalid_argument);
  EXPECT_THROW(set_kernel_level("sse9"), std::invalid_argument);
}

class elementwise_levels : public ::testing::TestWithParam<std::string> {};

TEST_P(elementwise_levels, ops_match_definitions) {
  level_guard g;
  if (!kernel_level_available(GetParam())) GTEST_SKIP() << GetParam() << " not supported by this CPU";
  set_kernel_level(GetParam());
  const int64_t n = 1000;  // not a multiple of any vector width
  auto a = qf::test::random_floats(n, 1), b = qf::test::random_floats(n, 2), w = qf::test::random_floats(n, 3);
  std::vector<fp16_t> h(n);
  std::vector<float> hf(n), out(n), ref(n);
  for (int64_t i = 0; i < n; ++i) {
    h[i] = f32_to_fp16(a[i]);
    hf[i] = fp16_to_f32(h[i]);
  }
  double dot = 0, doth = 0, ss = 0;
  for (int64_t i = 0; i < n; ++i) {
    dot += static_cast<double>(a[i]) * b[i];
    doth += static_cast<double>(hf[i]) * b[i];
    ss += static_cast<double>(a[i]) * a[i];
  }
  EXPECT_NEAR(dot_f32(a.data(), b.data(), n), dot, 1e-3);
  EXPECT_NEAR(dot_f16_f32(h.data(), b.data(), n), doth, 1e-3);

  std::vector<fp16_t> h2(n);
  f32_to_f16_row(a.data(), h2.data(), n);
  EXPECT_EQ(h2, h);  // exact, round to nearest even
  f16_to_f32_row(h.data(), out.data(), n);
  EXPECT_EQ(out, hf);

  out = b;
  axpy_f16(0.75f, h.data(), out.data(), n);
  for (int64_t i = 0; i < n; ++i) ASSERT_NEAR(out[i], b[i] + 0.75f * hf[i], 1e-5);

  add(a.data(), b.data(), out.data(), n);
  for (int64_t i = 0; i < n; ++i) ASSERT_EQ(out[i], a[i] + b[i]);

  rms_norm(a.data(), w.data(), out.data(), n, 1e-6f);
  const double inv = 1.0 / std::sqrt(ss / n + 1e-6);
  for (int64_t i = 0; i < n; ++i) ASSERT_NEAR(out[i], a[i] * inv * w[i], 1e-4);

  silu_mul(a.data(), b.data(), out.data(), n);
  for (int64_t i = 0; i < n; ++i) {
    const double ref = a[i] / (1 + std::exp(-static_cast<double>(a[i]))) * b[i];
    ASSERT_NEAR(out[i], ref, 1e-6 * std::fabs(ref) + 1e-7) << i;
  }
  // Extreme gates: saturates to the input (large positive) or to zero (large negative).
  const float big[2] = {100.0f, -100.0f}, ones[2] = {1.0f, 1.0f};
  float sat[2];
  silu_mul(big, ones, sat, 2);
  EXPECT_NEAR(sat[0], 100.0f, 1e-4);
  EXPECT_NEAR(sat[1], 0.0f, 1e-30);

  // GELU (tanh approximation), alone and gating `up`, against the formula in double.
  auto gelu_ref = [](double x) {
    return 0.5 * x * (1.0 + std::tanh(std::sqrt(2.0 / 3.14159265358979323846) * (x + 0.044715 * x * x * x)));
  };
  std::vector<float> wide_x(n);
  for (int64_t i = 0; i < n; ++i) wide_x[i] = a[i] * 12.0f;  // past the tanh saturation both ways
  gelu_mul(wide_x.data(), nullptr, out.data(), n);
  for (int64_t i = 0; i < n; ++i) ASSERT_NEAR(out[i], gelu_ref(wide_x[i]), 2e-6 * std::fabs(wide_x[i]) + 1e-7) << i;
  gelu_mul(a.data(), b.data(), out.data(), n);
  for (int64_t i = 0; i < n; ++i) {
    const double ref = gelu_ref(a[i]) * b[i];
    ASSERT_NEAR(out[i], ref, 2e-6 * std::fabs(ref) + 1e-7) << i;
  }
  const float ext[3] = {40.0f, -40.0f, 0.0f};
  float ge[3];
  gelu_mul(ext, nullptr, ge, 3);
  EXPECT_FLOAT_EQ(ge[0], 40.0f);
  EXPECT_NEAR(ge[1], 0.0f, 1e-30);
  EXPECT_EQ(ge[2], 0.0f);

  // LayerNorm with and without bias: centred, unit variance, then w and b.
  std::vector<float> shifted(n);
  for (int64_t i = 0; i < n; ++i) shifted[i] = a[i] + 3.0f;  // a mean far from 0
  double mean = 0, var = 0;
  for (float v : shifted) mean += v;
  mean /= n;
  for (float v : shifted) var += (v - mean) * (v - mean);
  var /= n;
  const double linv = 1.0 / std::sqrt(var + 1e-5);
  layer_norm(shifted.data(), w.data(), b.data(), out.data(), n, 1e-5f);
  for (int64_t i = 0; i < n; ++i) ASSERT_NEAR(out[i], (shifted[i] - mean) * linv * w[i] + b[i], 1e-5) << i;
  layer_norm(shifted.data(), w.data(), nullptr, out.data(), n, 1e-5f);
  for (int64_t i = 0; i < n; ++i) ASSERT_NEAR(out[i], (shifted[i] - mean) * linv * w[i], 1e-5) << i;

  out = a;
  scale(out.data(), -2.5f, n);
  for (int64_t i = 0; i < n; ++i) ASSERT_EQ(out[i], a[i] * -2.5f);

  out = a;
  softmax(out.data(), n);
  double sum = 0, mx = -1e30;
  for (float v : a) mx = std::max<double>(mx, v);
  for (float v : a) sum += std::exp(v - mx);
  for (int64_t i = 0; i < n; ++i) {
    const double ref = std::exp(a[i] - mx) / sum;
    ASSERT_NEAR(out[i], ref, 2e-6 * ref) << i;
  }
  std::vector<float> wide = {-200.0f, 0.0f, 3.0f, -1e30f};  // large spread, underflow to 0
  softmax(wide.data(), 4);
  EXPECT_NEAR(wide[2], 1.0 / (1.0 + std::exp(-3.0)), 1e-6);
  EXPECT_EQ(wide[3], 0.0f);  // masked score: exactly zero weight
  EXPECT_LT(wide[0], 1e-30f);
}

// top_logprob finds the largest logit wherever it lies (the vector body, the
// eight-wide tail, the scalar tail), at every length class.
TEST_P(elementwise_levels, top_logprob_finds_the_largest_logit_anywhere) {
  level_guard g;
  if (!kernel_level_available(GetParam())) GTEST_SKIP() << GetParam() << " not supported by this CPU";
  set_kernel_level(GetParam());
  for (int64_t n : {1, 7, 8, 31, 32, 45, 1000, 151936}) {
    auto x = qf::test::random_floats(static_cast<size_t>(n), static_cast<uint32_t>(n), 4.0f);
    for (int64_t at : {int64_t{0}, n / 2, n - 9, n - 2, n - 1}) {
      if (at < 0) continue;
      auto y = x;
      y[static_cast<size_t>(at)] = 30.0f;  // well above every other logit
      double sum = 0;
      for (float v : y) sum += std::exp(static_cast<double>(v) - 30.0);
      EXPECT_NEAR(top_logprob(y.data(), n), -std::log(sum), 1e-5) << "n " << n << ", largest at " << at;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(levels, elementwise_levels, ::testing::Values("scalar", "avx2", "avx512"));

TEST(cpu, detection_is_consistent) {
  const auto& f = detect_cpu();
  if (f.avx512vnni) {
    EXPECT_TRUE(f.avx512f);
  }
  level_guard g;
  set_kernel_level("auto");
  std::printf("[ info ] auto kernel level: %s\n", std::string(kernel_level()).c_str());
}

// The CPU backend's LayerNorm, GELU, GeGLU and scale over sizes that split
// across threads, with the output aliasing the input, against the kernels
// called directly on one thread.
TEST(cpu_backend_ops, layer_norm_gelu_geglu_scale_split_over_threads) {
  auto be = qf::infer::make_cpu_backend(2);
  const int64_t rows = 9, cols = 96, n = int64_t{1} << 17;  // above the parallel thresholds
  const auto x = qf::test::random_floats(static_cast<size_t>(n), 11, 3.0f);
  const auto u = qf::test::random_floats(static_cast<size_t>(n), 12);
  const auto w = qf::test::random_floats(static_cast<size_t>(cols), 13), b = qf::test::random_floats(static_cast<size_t>(cols), 14);
  auto buf = [&](const std::vector<float>& v) {
    auto p = be->alloc(v.size() * sizeof(float));
    be->upload(*p, 0, v.data(), v.size() * sizeof(float));
    return p;
  };
  auto get = [&](const qf::infer::buffer& p, size_t count) {
    std::vector<float> v(count);
    be->download(p, 0, v.data(), count * sizeof(float));
    return v;
  };
  auto bx = buf(x), bu = buf(u), bw = buf(w), bb = buf(b);
  be->layer_norm(*bx, *bw, bb.get(), *bx, rows, cols, 1e-5f);  // in place
  std::vector<float> ref(static_cast<size_t>(rows * cols));
  for (int64_t r = 0; r < rows; ++r) layer_norm(x.data() + r * cols, w.data(), b.data(), ref.data() + r * cols, cols, 1e-5f);
  EXPECT_EQ(get(*bx, ref.size()), ref);

  bx = buf(x);
  be->gelu(*bx, *bx, n);
  std::vector<float> g(static_cast<size_t>(n));
  gelu_mul(x.data(), nullptr, g.data(), n);
  EXPECT_EQ(get(*bx, g.size()), g);

  bx = buf(x);
  be->geglu(*bx, *bu, *bx, n);
  gelu_mul(x.data(), u.data(), g.data(), n);
  EXPECT_EQ(get(*bx, g.size()), g);

  bx = buf(x);
  be->scale(*bx, 0.125f, n);
  const auto s = get(*bx, static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) ASSERT_EQ(s[i], x[i] * 0.125f) << i;
}

// argmax_rows picks the first column of the largest value, wherever it lies,
// ignores NaNs after column 0, and keeps column 0 when that is NaN (as a
// scan keeping the first strict maximum does).
TEST(cpu_backend_ops, argmax_rows_takes_the_first_largest_column) {
  auto be = qf::infer::make_cpu_backend(1);
  const int64_t cols = 1037;
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  std::vector<std::vector<float>> rows;
  std::vector<int32_t> want;
  for (int64_t at : {int64_t{0}, int64_t{500}, cols - 9, cols - 1}) {
    auto r = qf::test::random_floats(static_cast<size_t>(cols), static_cast<uint32_t>(at) + 5);
    r[static_cast<size_t>(at)] = 9.0f;
    rows.push_back(r), want.push_back(static_cast<int32_t>(at));
  }
  auto tie = qf::test::random_floats(static_cast<size_t>(cols), 21);
  tie[700] = tie[40] = 9.0f;
  rows.push_back(tie), want.push_back(40);
  auto nan_late = tie;
  nan_late[3] = nan;
  rows.push_back(nan_late), want.push_back(40);
  auto nan_first = tie;
  nan_first[0] = nan;
  rows.push_back(nan_first), want.push_back(0);
  rows.push_back(std::vector<float>(static_cast<size_t>(cols), -inf)), want.push_back(0);
  std::vector<float> all;
  for (const auto& r : rows) all.insert(all.end(), r.begin(), r.end());
  auto x = be->alloc(all.size() * sizeof(float));
  be->upload(*x, 0, all.data(), all.size() * sizeof(float));
  auto out = be->alloc(rows.size() * sizeof(int32_t));
  be->argmax_rows(*x, static_cast<int64_t>(rows.size()), cols, *out);
  std::vector<int32_t> got(rows.size());
  be->download(*out, 0, got.data(), got.size() * sizeof(int32_t));
  EXPECT_EQ(got, want);
}

// The backend's rope keeps the last cos/sin table (a forward pass rotates q
// and k of every layer at the same positions) and must build a new one when
// the positions (new values in the same buffer, or more of them), the
// parameters or the frequency factors change: every call equals the host
// math on its own, bit for bit.
TEST(cpu_backend_ops, rope_reuses_its_table_only_for_the_same_positions_and_parameters) {
  using namespace qf::infer;
  auto be = make_cpu_backend(2);
  const int64_t n_heads = 3, hd = 16, n_max = 6;
  const std::vector<float> fac{1.0f, 2.0f, 4.0f, 8.0f, 1.0f, 2.0f, 4.0f, 8.0f};
  auto factors = be->alloc(fac.size() * sizeof(float));
  be->upload(*factors, 0, fac.data(), fac.size() * sizeof(float));
  auto pos_buf = be->alloc(n_max * sizeof(int32_t));
  const rope_params neox{rope_style::neox, hd, 10000.0f, 1.0f};
  rope_params other_base = neox;
  other_base.freq_base = 500000.0f;
  rope_params with_factors = neox;
  with_factors.freq_factors = factors.get();
  struct call {
    std::vector<int32_t> pos;
    rope_params p;
  };
  const std::vector<call> calls = {
      {{7}, neox},          {{7}, neox},           {{7}, other_base}, {{8}, other_base},  // decode steps
      {{8}, with_factors},  {{3, 4, 5, 6, 7, 9}, neox}, {{3, 4, 5, 6, 7, 9}, neox}, {{3, 4, 5, 6, 7, 10}, neox},
      {{3, 4, 5}, neox},
  };
  for (size_t c = 0; c < calls.size(); ++c) {
    const auto& [pos, p] = calls[c];
    const auto n = static_cast<int64_t>(pos.size());
    const auto x = qf::test::random_floats(static_cast<size_t>(n * n_heads * hd), static_cast<uint32_t>(c) + 40);
    be->upload(*pos_buf, 0, pos.data(), pos.size() * sizeof(int32_t));
    auto bx = be->alloc(x.size() * sizeof(float));
    be->upload(*bx, 0, x.data(), x.size() * sizeof(float));
    be->rope(*bx, *pos_buf, n, n_heads, hd, p);
    std::vector<float> got(x.size()), want = x, cs(static_cast<size_t>(hd));
    be->download(*bx, 0, got.data(), got.size() * sizeof(float));
    for (int64_t t = 0; t < n; ++t) {
      rope_cos_sin(pos[static_cast<size_t>(t)], p, cs.data(), p.freq_factors ? fac.data() : nullptr);
      rope_apply(want.data() + t * n_heads * hd, n_heads, hd, cs.data(), p);
    }
    EXPECT_EQ(got, want) << "call " << c;
  }
}

// A vocabulary-long row is cut in chunks that the pool shares: on one and on
// two threads the pick is the scan's (first largest column, wherever it lies:
// a chunk's edge, the row's last partial chunk, ties across chunks, NaN in
// column 0 or in the chunk holding the largest) and the log-probability is
// cpu::top_logprob's, bit for bit.
TEST(cpu_backend_ops, greedy_pick_over_a_long_row_is_the_scans_on_any_thread_count) {
  const int64_t cols = 151936;  // 148.4 chunks of 1024
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  std::vector<std::vector<float>> rows;
  for (int64_t at : {int64_t{0}, int64_t{1023}, int64_t{1024}, int64_t{77777}, cols - 1}) {
    auto r = qf::test::random_floats(static_cast<size_t>(cols), static_cast<uint32_t>(at) + 3);
    r[static_cast<size_t>(at)] = 9.0f;
    rows.push_back(r);
  }
  auto tie = qf::test::random_floats(static_cast<size_t>(cols), 8);
  tie[150000] = tie[5000] = tie[5001] = 9.0f;
  rows.push_back(tie);
  auto nan_near = tie;
  nan_near[4999] = nan;  // in the chunk that holds the largest, before it
  rows.push_back(nan_near);
  auto nan_first = tie;
  nan_first[0] = nan;
  rows.push_back(nan_first);
  rows.push_back(std::vector<float>(static_cast<size_t>(cols), -inf));
  std::vector<float> all;
  for (const auto& r : rows) all.insert(all.end(), r.begin(), r.end());
  const auto n_rows = static_cast<int64_t>(rows.size());

  std::vector<int32_t> want_best;  // the scan keeping the first strict maximum
  std::vector<float> want_lp;
  for (const auto& r : rows) {
    int32_t b = 0;
    for (int64_t i = 1; i < cols; ++i)
      if (r[static_cast<size_t>(i)] > r[static_cast<size_t>(b)]) b = static_cast<int32_t>(i);
    want_best.push_back(b);
    want_lp.push_back(qf::infer::cpu::top_logprob(r.data(), cols));
  }
  EXPECT_EQ(want_best[1], 1023);
  EXPECT_EQ(want_best[5], 5000);
  EXPECT_EQ(want_best[6], 5000);
  EXPECT_EQ(want_best[7], 0);
  // The two ops apart, then argmax_logprob_rows (one pass for the chunk maxima of both).
  for (int threads : {1, 2, 3}) {
    for (bool together : {false, true}) {
      auto be = qf::infer::make_cpu_backend(threads);
      auto x = be->alloc(all.size() * sizeof(float));
      be->upload(*x, 0, all.data(), all.size() * sizeof(float));
      auto best = be->alloc(rows.size() * sizeof(int32_t));
      auto lp = be->alloc(rows.size() * sizeof(float));
      if (together) {
        be->argmax_logprob_rows(*x, n_rows, cols, *best, *lp);
      } else {
        be->argmax_rows(*x, n_rows, cols, *best);
        be->top_logprob_rows(*x, n_rows, cols, *lp);
      }
      std::vector<int32_t> got_best(rows.size());
      std::vector<float> got_lp(rows.size());
      be->download(*best, 0, got_best.data(), got_best.size() * sizeof(int32_t));
      be->download(*lp, 0, got_lp.data(), got_lp.size() * sizeof(float));
      const std::string how = std::to_string(threads) + " thread(s)" + (together ? ", together" : ", apart");
      EXPECT_EQ(got_best, want_best) << how;
      for (size_t r = 0; r < rows.size(); ++r) {
        if (std::isnan(want_lp[r])) {
          EXPECT_TRUE(std::isnan(got_lp[r])) << "row " << r << ", " << how;
        } else {
          EXPECT_EQ(got_lp[r], want_lp[r]) << "row " << r << ", " << how;
        }
      }
    }
  }
  // No columns: pick 0, log-probability NaN, as top_logprob says.
  auto be = qf::infer::make_cpu_backend(2);
  auto x = be->alloc(16);
  auto best = be->alloc(2 * sizeof(int32_t));
  auto lp = be->alloc(2 * sizeof(float));
  const int32_t junk[2] = {7, 7};
  be->upload(*best, 0, junk, sizeof(junk));
  be->argmax_logprob_rows(*x, 2, 0, *best, *lp);
  int32_t got_best[2];
  float got_lp[2];
  be->download(*best, 0, got_best, sizeof(got_best));
  be->download(*lp, 0, got_lp, sizeof(got_lp));
  EXPECT_EQ(got_best[0], 0);
  EXPECT_EQ(got_best[1], 0);
  EXPECT_TRUE(std::isnan(got_lp[0]) && std::isnan(got_lp[1]));
}
