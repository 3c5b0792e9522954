// Every CUDA op against the CPU reference, with an NMSE bound per op/type in
// the manner of a backend-ops test. All tests skip when no device exists.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "inference/backend/cpu/ops.h"
#include "inference/backend/rope.h"
#include "inference/backend/cuda/cuda_ops.h"
#include "inference/sampling/sampler.h"

namespace qf::infer {
namespace {

namespace cu = qf::infer::cuda;

#define REQUIRE_DEVICE()                                              \
  do {                                                                \
    if (cu::device_count() == 0) GTEST_SKIP() << "no CUDA device";    \
  } while (0)

template <typename T>
struct dev_buf {
  T* p = nullptr;
  size_t n = 0;
  explicit dev_buf(size_t count) : n(count) { cu::check(cudaMalloc(&p, std::max<size_t>(1, n) * sizeof(T)), "cudaMalloc"); }
  dev_buf(const std::vector<T>& h) : dev_buf(h.size()) { upload(h); }
  ~dev_buf() { cudaFree(p); }
  void upload(const std::vector<T>& h) { cu::check(cudaMemcpy(p, h.data(), h.size() * sizeof(T), cudaMemcpyHostToDevice), "upload"); }
  std::vector<T> download() const {
    std::vector<T> h(n);
    cu::check(cudaDeviceSynchronize(), "sync");
    cu::check(cudaMemcpy(h.data(), p, n * sizeof(T), cudaMemcpyDeviceToHost), "download");
    return h;
  }
};

double nmse(const std::vector<float>& got, const std::vector<double>& ref) {
  double num = 0, den = 0;
  for (size_t i = 0; i < ref.size(); ++i) {
    num += (double(got[i]) - ref[i]) * (double(got[i]) - ref[i]);
    den += ref[i] * ref[i];
  }
  return den > 0 ? num / den : num;
}

std::vector<float> random_floats(size_t n, uint32_t seed, float scale = 1.0f) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> d(0.0f, scale);
  std::vector<float> v(n);
  for (auto& x : v) x = d(rng);
  return v;
}

struct quantized {
  std::vector<uint8_t> bytes;
  std::vector<float> dequant;  // what the weights really are after quantization
};

quantized make_weight(ggml_type t, int64_t rows, int64_t cols, uint32_t seed) {
  const auto src = random_floats(size_t(rows * cols), seed);
  const size_t rb = *row_size(t, cols);
  quantized q;
  q.bytes.resize(rb * size_t(rows));
  q.dequant.resize(size_t(rows * cols));
  for (int64_t r = 0; r < rows; ++r) {
    cpu::quantize_row(t, src.data() + r * cols, q.bytes.data() + r * rb, cols);
    cpu::dequantize_row(t, q.bytes.data() + r * rb, q.dequant.data() + r * cols, cols);
  }
  return q;
}

const ggml_type k_types[] = {ggml_type::f32,  ggml_type::f16,  ggml_type::bf16, ggml_type::q8_0,
                             ggml_type::q4_0, ggml_type::q4_1, ggml_type::q5_0, ggml_type::q5_1,
                             ggml_type::q4_k, ggml_type::q5_k, ggml_type::q6_k};

std::vector<double> ref_matmul(const std::vector<float>& w, int64_t rows, int64_t cols,
                               const std::vector<float>& x, int64_t nt) {
  std::vector<double> y(size_t(nt * rows));
  for (int64_t t = 0; t < nt; ++t)
    for (int64_t r = 0; r < rows; ++r) {
      double s = 0;
      for (int64_t c = 0; c < cols; ++c) s += double(w[r * cols + c]) * x[t * cols + c];
      y[t * rows + r] = s;
    }
  return y;
}

// Rows not a multiple of the rows per thread block, and row lengths whose
// (block, part) count is not a multiple of the warp: the tails are exercised.
// 97 rows take the kernel with 4 warps per row, 8197 the one-warp-per-row one.
TEST(CudaOps, GemvEveryTypeAndBatch) {
  REQUIRE_DEVICE();
  for (const int64_t rows : {int64_t(97), int64_t(8197)})
  for (ggml_type t : k_types) {
    const int64_t cols = traits(t).block_size == 256 ? 1280 : 896;
    const auto w = make_weight(t, rows, cols, 7);
    dev_buf<uint8_t> dw(w.bytes);
    const std::vector<int64_t> batches =
        rows < 1000 ? std::vector<int64_t>{1, 2, 3, 4, 5, 6, 7, 8} : std::vector<int64_t>{1, 3, 8};
    for (int64_t nt : batches) {
      const auto x = random_floats(size_t(nt * cols), 11 + uint32_t(nt));
      dev_buf<float> dx(x), dy(size_t(nt * rows));
      cu::gemv(t, dw.p, rows, cols, dx.p, nt, dy.p, nullptr);
      const double e = nmse(dy.download(), ref_matmul(w.dequant, rows, cols, x, nt));
      EXPECT_LT(e, 1e-9) << traits(t).name << " rows=" << rows << " n_tokens=" << nt;
    }
  }
}

TEST(CudaOps, GemmCublasEveryType) {
  REQUIRE_DEVICE();
  const int64_t rows = 256, cols = 512, nt = 37;
  cublasContext* handle = nullptr;
  ASSERT_EQ(cu::create_cublas(&handle), true);
  for (ggml_type t : k_types) {
    const auto w = make_weight(t, rows, cols, 3);
    const auto x = random_floats(size_t(nt * cols), 5);
    dev_buf<uint8_t> dw(w.bytes);
    dev_buf<float> dx(x), dy(size_t(nt * rows));
    dev_buf<uint16_t> sw(size_t(rows * cols)), sx(size_t(nt * cols));
    cu::gemm(handle, t, dw.p, rows, cols, dx.p, nt, dy.p, sw.p, sx.p, nullptr);
    // F16 rounding of weights and activations bounds the agreement.
    EXPECT_LT(nmse(dy.download(), ref_matmul(w.dequant, rows, cols, x, nt)), 5e-6) << traits(t).name;
  }
  cu::destroy_cublas(handle);
}

TEST(CudaOps, DequantizeAndGetRows) {
  REQUIRE_DEVICE();
  const int64_t rows = 16, cols = 768;
  for (ggml_type t : k_types) {
    const auto w = make_weight(t, rows, cols, 21);
    dev_buf<uint8_t> dw(w.bytes);
    // Ids outside the table (16, -1) give zero rows instead of reading out of bounds.
    std::vector<int32_t> ids = {3, 0, 15, 3, 16, -1};
    dev_buf<int32_t> did(ids);
    dev_buf<float> out(ids.size() * size_t(cols));
    cu::get_rows(t, dw.p, rows, cols, did.p, int64_t(ids.size()), out.p, nullptr);
    const auto got = out.download();
    std::vector<double> ref;
    for (int32_t id : ids)
      for (int64_t c = 0; c < cols; ++c) ref.push_back(id >= 0 && id < rows ? w.dequant[size_t(id * cols + c)] : 0.0);
    EXPECT_LT(nmse(got, ref), 1e-12) << traits(t).name;
    for (size_t i = 4 * size_t(cols); i < got.size(); ++i) ASSERT_EQ(got[i], 0.0f) << traits(t).name;

    dev_buf<uint16_t> h(size_t(rows * cols));
    cu::dequantize_to_f16(t, dw.p, rows, cols, h.p, nullptr);
    const auto hh = h.download();
    std::vector<float> hf(hh.size());
    for (size_t i = 0; i < hh.size(); ++i) hf[i] = fp16_to_f32(hh[i]);
    std::vector<double> ref2(w.dequant.begin(), w.dequant.end());
    EXPECT_LT(nmse(hf, ref2), 1e-6) << traits(t).name;
  }
}

TEST(CudaOps, RmsNormSiluAddSoftmaxArgmax) {
  REQUIRE_DEVICE();
  const int64_t n_rows = 5, dim = 896;
  const auto x = random_floats(size_t(n_rows * dim), 1), w = random_floats(size_t(dim), 2);
  dev_buf<float> dx(x), dw(w), dy(x.size());
  cu::rms_norm(dx.p, dw.p, dy.p, n_rows, dim, 1e-6f, nullptr);
  std::vector<float> ref(x.size());
  for (int64_t r = 0; r < n_rows; ++r) cpu::rms_norm(x.data() + r * dim, w.data(), ref.data() + r * dim, dim, 1e-6f);
  EXPECT_LT(nmse(dy.download(), std::vector<double>(ref.begin(), ref.end())), 1e-10);

  const auto g = random_floats(4864, 3), u = random_floats(4864, 4);
  dev_buf<float> dg(g), du(u), dout(g.size());
  cu::silu_mul(dg.p, du.p, dout.p, int64_t(g.size()), nullptr);
  std::vector<float> sref(g.size());
  cpu::silu_mul(g.data(), u.data(), sref.data(), int64_t(g.size()));
  EXPECT_LT(nmse(dout.download(), std::vector<double>(sref.begin(), sref.end())), 1e-10);

  cu::add(dg.p, du.p, dout.p, int64_t(g.size()), nullptr);
  std::vector<double> aref(g.size());
  for (size_t i = 0; i < g.size(); ++i) aref[i] = double(g[i]) + u[i];
  EXPECT_LT(nmse(dout.download(), aref), 1e-14);

  dev_buf<float> db(std::vector<float>(w.begin(), w.end()));
  dev_buf<float> dxb(x);
  cu::add_bias(dxb.p, db.p, n_rows, dim, nullptr);
  std::vector<double> bref(x.size());
  for (int64_t r = 0; r < n_rows; ++r)
    for (int64_t c = 0; c < dim; ++c) bref[size_t(r * dim + c)] = double(x[size_t(r * dim + c)]) + w[size_t(c)];
  EXPECT_LT(nmse(dxb.download(), bref), 1e-14);

  auto logits = random_floats(151936, 9, 3.0f);
  logits[123457] = 50.0f;
  dev_buf<float> dl(logits);
  dev_buf<int32_t> am(1);
  cu::argmax_rows(dl.p, 1, int64_t(logits.size()), am.p, nullptr);
  EXPECT_EQ(am.download()[0], 123457);
  // Several rows; ties go to the lowest index, as on the CPU.
  std::vector<float> rows(3 * 5000, 0.0f);
  rows[17] = 2.0f;
  rows[4000] = 2.0f;
  rows[5000 + 4999] = 1.0f;
  for (int i = 0; i < 5000; ++i) rows[size_t(2 * 5000 + i)] = -1.0f;
  dev_buf<float> drows(rows);
  dev_buf<int32_t> am3(3);
  cu::argmax_rows(drows.p, 3, 5000, am3.p, nullptr);
  EXPECT_EQ(am3.download(), (std::vector<int32_t>{17, 4999, 0}));
  // The argmax's log-probability, against the host's log softmax.
  dev_buf<float> lp(3);
  cu::top_logprob_rows(drows.p, 3, 5000, lp.p, nullptr);
  const std::vector<float> lps = lp.download();
  for (int r = 0; r < 3; ++r) {
    const std::span<const float> row(rows.data() + r * 5000, 5000);
    EXPECT_NEAR(lps[size_t(r)], qf::infer::top_logprob(row), 1e-4) << "row " << r;
  }
  dev_buf<float> lp1(1);
  cu::top_logprob_rows(dl.p, 1, int64_t(logits.size()), lp1.p, nullptr);
  EXPECT_NEAR(lp1.download()[0], qf::infer::top_logprob(logits), 1e-4);

  std::vector<float> sm(logits.begin(), logits.begin() + 2 * 1000);
  dev_buf<float> dsm(sm);
  cu::softmax_rows(dsm.p, 2, 1000, nullptr);
  std::vector<float> smref = sm;
  cpu::softmax(smref.data(), 1000);
  cpu::softmax(smref.data() + 1000, 1000);
  EXPECT_LT(nmse(dsm.download(), std::vector<double>(smref.begin(), smref.end())), 1e-10);
}

// Plain rotation in double precision: the definition both backends implement.
void ref_rope(std::vector<double>& v, int64_t n_tokens, int64_t n_heads, int64_t hd, const std::vector<int32_t>& pos,
              double base, bool neox) {
  for (int64_t t = 0; t < n_tokens; ++t)
    for (int64_t h = 0; h < n_heads; ++h)
      for (int64_t i = 0; i < hd / 2; ++i) {
        const double th = pos[size_t(t)] * std::pow(base, -2.0 * double(i) / double(hd));
        const int64_t a = neox ? i : 2 * i, b = neox ? i + hd / 2 : 2 * i + 1;
        double* r = v.data() + (t * n_heads + h) * hd;
        const double x0 = r[a], x1 = r[b];
        r[a] = x0 * std::cos(th) - x1 * std::sin(th);
        r[b] = x0 * std::sin(th) + x1 * std::cos(th);
      }
}

TEST(CudaOps, RopeBothStylesAndShift) {
  REQUIRE_DEVICE();
  const int64_t nt = 7, nh = 14, hd = 64;
  const std::vector<int32_t> pos = {0, 1, 2, 100, 511, 2047, 4095};
  for (bool neox : {false, true}) {
    const auto x = random_floats(size_t(nt * nh * hd), 13);
    dev_buf<float> dx(x);
    dev_buf<int32_t> dp(pos);
    cu::rope(dx.p, nt, nh, hd, hd, dp.p, 10000.0f, 1.0f, nullptr, neox, nullptr);
    std::vector<double> ref(x.begin(), x.end());
    ref_rope(ref, nt, nh, hd, pos, 10000.0, neox);
    // float angles (powf, sincosf within an ulp or two) against a double reference
    EXPECT_LT(nmse(dx.download(), ref), 1e-8) << "neox=" << neox;

    // Shifting keys rotated at p by delta equals rotating at p + delta (F16 and F32 caches).
    std::vector<double> rot(x.begin(), x.end());
    ref_rope(rot, nt, nh, hd, pos, 10000.0, neox);
    std::vector<int32_t> moved = pos;
    for (auto& p : moved) p += 3;
    std::vector<double> ref2(x.begin(), x.end());
    ref_rope(ref2, nt, nh, hd, moved, 10000.0, neox);
    std::vector<uint16_t> kh(x.size());
    for (size_t i = 0; i < kh.size(); ++i) kh[i] = f32_to_fp16(float(rot[i]));
    dev_buf<uint16_t> dk(kh);
    cu::rope_shift(dk.p, ggml_type::f16, nt, nh, hd, hd, 3, 10000.0f, 1.0f, nullptr, neox, nullptr);
    const auto got = dk.download();
    std::vector<float> gf(got.size());
    for (size_t i = 0; i < got.size(); ++i) gf[i] = fp16_to_f32(got[i]);
    EXPECT_LT(nmse(gf, ref2), 2e-6) << "shift f16 neox=" << neox;
    dev_buf<float> dk32(std::vector<float>(rot.begin(), rot.end()));
    cu::rope_shift(dk32.p, ggml_type::f32, nt, nh, hd, hd, 3, 10000.0f, 1.0f, nullptr, neox, nullptr);
    EXPECT_LT(nmse(dk32.download(), ref2), 1e-9) << "shift f32 neox=" << neox;
  }
}

TEST(CudaOps, RopeFrequencyFactors) {
  REQUIRE_DEVICE();
  const int64_t nt = 3, nh = 4, hd = 64;
  const std::vector<int32_t> pos = {5, 900, 8000};
  std::vector<float> factors(size_t(hd / 2));
  for (size_t i = 0; i < factors.size(); ++i) factors[i] = 1.0f + float(i % 5);
  const auto x = random_floats(size_t(nt * nh * hd), 17);
  dev_buf<float> dx(x), df(factors);
  dev_buf<int32_t> dp(pos);
  cu::rope(dx.p, nt, nh, hd, hd, dp.p, 500000.0f, 1.0f, df.p, false, nullptr);
  std::vector<double> ref(x.begin(), x.end());
  for (int64_t t = 0; t < nt; ++t)
    for (int64_t h = 0; h < nh; ++h)
      for (int64_t i = 0; i < hd / 2; ++i) {
        const double th = pos[size_t(t)] * std::pow(500000.0, -2.0 * double(i) / double(hd)) / factors[size_t(i)];
        double* r = ref.data() + (t * nh + h) * hd;
        const double x0 = r[2 * i], x1 = r[2 * i + 1];
        r[2 * i] = x0 * std::cos(th) - x1 * std::sin(th);
        r[2 * i + 1] = x0 * std::sin(th) + x1 * std::cos(th);
      }
  EXPECT_LT(nmse(dx.download(), ref), 1e-8);
}

// LayerNorm (with and without bias), GELU, GeGLU and scale against the CPU ops.
TEST(CudaOps, LayerNormGeluScaleMatchCpu) {
  REQUIRE_DEVICE();
  const int64_t rows = 5, dim = 1000;
  auto x = random_floats(size_t(rows * dim), 31);
  for (auto& v : x) v += 2.0f;  // a mean far from zero
  const auto w = random_floats(size_t(dim), 32), b = random_floats(size_t(dim), 33), u = random_floats(size_t(rows * dim), 34);
  dev_buf<float> dx(x), dw(w), db(b), du(u), dy(size_t(rows * dim));
  for (bool bias : {true, false}) {
    cu::layer_norm(dx.p, dw.p, bias ? db.p : nullptr, dy.p, rows, dim, 1e-5f, nullptr);
    std::vector<float> cpu_y(x.size());
    for (int64_t r = 0; r < rows; ++r)
      cpu::layer_norm(x.data() + r * dim, w.data(), bias ? b.data() : nullptr, cpu_y.data() + r * dim, dim, 1e-5f);
    EXPECT_LT(nmse(dy.download(), std::vector<double>(cpu_y.begin(), cpu_y.end())), 1e-10) << bias;
  }
  std::vector<float> cpu_g(x.size());
  cu::gelu_mul(dx.p, nullptr, dy.p, int64_t(x.size()), nullptr);
  cpu::gelu_mul(x.data(), nullptr, cpu_g.data(), int64_t(x.size()));
  EXPECT_LT(nmse(dy.download(), std::vector<double>(cpu_g.begin(), cpu_g.end())), 1e-10);
  cu::gelu_mul(dx.p, du.p, dy.p, int64_t(x.size()), nullptr);
  cpu::gelu_mul(x.data(), u.data(), cpu_g.data(), int64_t(x.size()));
  EXPECT_LT(nmse(dy.download(), std::vector<double>(cpu_g.begin(), cpu_g.end())), 1e-10);
  cu::scale(dx.p, -0.5f, int64_t(x.size()), nullptr);
  const auto scaled = dx.download();
  for (size_t i = 0; i < x.size(); ++i) ASSERT_EQ(scaled[i], x[i] * -0.5f) << i;
}

// YaRN rope against the host math of inference/backend/rope.cpp, and the
// shift as a pure rotation (no second mscale).
TEST(CudaOps, RopeYarnMatchesHost) {
  REQUIRE_DEVICE();
  const int64_t nt = 3, nh = 2, hd = 64;
  const std::vector<int32_t> pos = {3, 700, 9000};
  rope_params rp;
  rp.style = rope_style::neox;
  rp.n_rot = hd;
  rp.freq_base = 1000000.0f;
  rp.freq_scale = 0.25f;
  rp.ext_factor = 1.0f;
  rp.attn_factor = 0.9f;
  yarn_corr_dims(hd, 4096, rp.freq_base, 32.0f, 1.0f, rp.corr_low, rp.corr_high);
  const auto x = random_floats(size_t(nt * nh * hd), 41);
  dev_buf<float> dx(x);
  dev_buf<int32_t> dp(pos);
  cu::rope(dx.p, nt, nh, hd, hd, dp.p, rp.freq_base, rp.freq_scale, nullptr, true, nullptr, rp.ext_factor,
           rp.attn_factor, rp.corr_low, rp.corr_high);
  std::vector<float> host = x;
  std::vector<float> cs(static_cast<size_t>(hd));
  for (int64_t t = 0; t < nt; ++t) {
    rope_cos_sin(pos[size_t(t)], rp, cs.data());
    rope_apply(host.data() + t * nh * hd, nh, hd, cs.data(), rp);
  }
  EXPECT_LT(nmse(dx.download(), std::vector<double>(host.begin(), host.end())), 1e-9);
  dev_buf<float> dk(x);
  cu::rope_shift(dk.p, ggml_type::f32, nt, nh, hd, hd, 5, rp.freq_base, rp.freq_scale, nullptr, true, nullptr,
                 rp.ext_factor, rp.corr_low, rp.corr_high);
  host = x;
  rope_cos_sin(5, rp, cs.data(), nullptr, /*shift=*/true);
  for (int64_t t = 0; t < nt; ++t) rope_apply(host.data() + t * nh * hd, nh, hd, cs.data(), rp);
  EXPECT_LT(nmse(dk.download(), std::vector<double>(host.begin(), host.end())), 1e-9);
}

// Three ways to run the same attention: an F16 cache with the position as a
// host value (a direct launch), F16 with the position read on the device and
// the grid sized for the whole cache (as a recorded step graph runs it), and
// an F32 cache.
TEST(CudaOps, AttentionMatchesNaiveCausal) {
  REQUIRE_DEVICE();
  const int64_t nh = 14, nkv = 2, hd = 64, n_ctx = 1200;
  const float scale = 1.0f / std::sqrt(float(hd));
  enum class mode { f16_host_pos, f16_device_pos, f32_device_pos };
  for (mode md : {mode::f16_host_pos, mode::f16_device_pos, mode::f32_device_pos})
  for (auto [n_past, nt] : std::vector<std::pair<int64_t, int64_t>>{{0, 1}, {0, 37}, {300, 1}, {700, 5}, {1000, 200}}) {
    const bool f32 = md == mode::f32_device_pos, on_device = md != mode::f16_host_pos;
    const int64_t n_kv = on_device ? n_ctx : n_past + nt;  // grid bound
    const auto q = random_floats(size_t(nt * nh * hd), 31);
    const auto kf = random_floats(size_t(n_ctx * nkv * hd), 32), vf = random_floats(size_t(n_ctx * nkv * hd), 33);
    std::vector<uint16_t> kh(kf.size()), vh(vf.size());
    std::vector<float> kr(kf.size()), vr(vf.size());  // what the cache holds
    for (size_t i = 0; i < kf.size(); ++i) {
      kh[i] = f32_to_fp16(kf[i]);
      vh[i] = f32_to_fp16(vf[i]);
      kr[i] = f32 ? kf[i] : fp16_to_f32(kh[i]);
      vr[i] = f32 ? vf[i] : fp16_to_f32(vh[i]);
    }
    dev_buf<float> dq(q), dout(q.size());
    dev_buf<uint16_t> dk(kh), dv(vh);
    dev_buf<float> dk32(kf), dv32(vf);
    std::vector<int32_t> pos(static_cast<size_t>(nt));
    for (int64_t t = 0; t < nt; ++t) pos[size_t(t)] = int32_t(n_past + t);
    dev_buf<int32_t> dpos(pos);
    dev_buf<float> scratch(size_t(cu::attention_scratch_floats(nt, nh, hd, n_kv)));
    // NaN everywhere: a split that is read without having been written shows.
    cu::check(cudaMemset(scratch.p, 0xFF, scratch.n * sizeof(float)), "cudaMemset");
    // With the position on the device, the host value is deliberately wrong: it must not be used.
    cu::attention(dq.p, f32 ? static_cast<const void*>(dk32.p) : dk.p, f32 ? static_cast<const void*>(dv32.p) : dv.p,
                  f32 ? ggml_type::f32 : ggml_type::f16, dout.p, nt, on_device ? 0 : n_past,
                  on_device ? dpos.p : nullptr, n_kv, nh, nkv, hd, scale, scratch.p, nullptr, 0, nullptr);

    std::vector<double> ref(q.size());
    for (int64_t t = 0; t < nt; ++t)
      for (int64_t h = 0; h < nh; ++h) {
        const int64_t g = h / (nh / nkv);
        std::vector<double> s(size_t(n_past + t + 1));
        double m = -1e300;
        for (int64_t j = 0; j <= n_past + t; ++j) {
          double d = 0;
          for (int64_t c = 0; c < hd; ++c)
            d += double(q[size_t((t * nh + h) * hd + c)]) * kr[size_t((j * nkv + g) * hd + c)];
          s[size_t(j)] = d * scale;
          m = std::max(m, s[size_t(j)]);
        }
        double l = 0;
        for (auto& v : s) { v = std::exp(v - m); l += v; }
        for (int64_t c = 0; c < hd; ++c) {
          double acc = 0;
          for (int64_t j = 0; j <= n_past + t; ++j) acc += s[size_t(j)] * vr[size_t((j * nkv + g) * hd + c)];
          ref[size_t((t * nh + h) * hd + c)] = acc / l;
        }
      }
    EXPECT_LT(nmse(dout.download(), ref), 1e-9)
        << "mode=" << int(md) << " n_past=" << n_past << " n_tokens=" << nt;
  }
}

// kv_store writes at the position it reads on the device, in F16 or F32, and
// skips rows past the cache (two guard rows after the cache must stay as they were).
TEST(CudaOps, KvStoreAtDevicePosition) {
  REQUIRE_DEVICE();
  const int64_t row_len = 300, n_cells = 10, n_rows = 4, n_alloc = n_cells + 2;
  const auto src = random_floats(size_t(n_rows * row_len), 51);
  const uint16_t guard16 = f32_to_fp16(-3.0f);
  for (int32_t first : {0, 3, 8}) {
    dev_buf<int32_t> dpos(std::vector<int32_t>{first, first + 1, first + 2, first + 3});
    dev_buf<float> dsrc(src);
    dev_buf<uint16_t> c16(std::vector<uint16_t>(size_t(n_alloc * row_len), guard16));
    dev_buf<float> c32(std::vector<float>(size_t(n_alloc * row_len), -7.0f));
    cu::kv_store(dsrc.p, n_rows, row_len, c16.p, ggml_type::f16, n_cells, dpos.p, nullptr, 0, nullptr);
    cu::kv_store(dsrc.p, n_rows, row_len, c32.p, ggml_type::f32, n_cells, dpos.p, nullptr, 0, nullptr);
    const auto h16 = c16.download();
    const auto h32 = c32.download();
    for (int64_t cell = 0; cell < n_alloc; ++cell)
      for (int64_t c = 0; c < row_len; ++c) {
        const size_t i = size_t(cell * row_len + c);
        const bool written = cell >= first && cell < first + n_rows && cell < n_cells;
        const float want = written ? src[size_t((cell - first) * row_len + c)] : 0.0f;
        ASSERT_EQ(h16[i], written ? f32_to_fp16(want) : guard16) << "first=" << first << " cell=" << cell;
        ASSERT_EQ(h32[i], written ? want : -7.0f) << "first=" << first << " cell=" << cell;
      }
  }
}

TEST(CudaOps, F32ToF16MatchesHostConversion) {
  REQUIRE_DEVICE();
  auto x = random_floats(4096, 41, 10.0f);
  x[0] = 65504.0f;  // largest finite half
  x[1] = 1e-7f;     // subnormal
  x[2] = 65520.0f;  // rounds to inf
  x[3] = -0.0f;
  x[4] = -1e6f;
  dev_buf<float> dx(x);
  dev_buf<uint16_t> dh(x.size());
  cu::f32_to_f16(dx.p, dh.p, int64_t(x.size()), nullptr);
  const auto h = dh.download();
  for (size_t i = 0; i < x.size(); ++i) EXPECT_EQ(h[i], f32_to_fp16(x[i])) << i;
  // Saturating (the cuBLAS operands): the same except that overflow stops at +-65504.
  cu::f32_to_f16(dx.p, dh.p, int64_t(x.size()), nullptr, /*saturate=*/true);
  const auto hs = dh.download();
  for (size_t i = 0; i < x.size(); ++i)
    EXPECT_EQ(hs[i], f32_to_fp16(std::min(std::max(x[i], -65504.0f), 65504.0f))) << i;
}

}  // namespace
}  // namespace qf::infer
