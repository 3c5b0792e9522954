// Whole-model agreement between the CUDA and CPU backends: the same GGUF
// loaded on both, logits compared at every position of a prefill and of a
// decode, and greedy generation compared token for token. Skips without a
// device; the stories260K case also skips without the shared test data.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "inference/backend/cuda/cuda_ops.h"
#include "inference/convert/llama2c.h"
#include "inference/convert/quantize_model.h"
#include "inference/convert/synth_model.h"
#include "inference/model/context.h"
#include "inference/model/model.h"
#include "tests/shared_test_data.h"

namespace qf::infer {
namespace {

namespace fs = std::filesystem;

fs::path test_data() { return qf::test::shared_test_data(QUICKFILL_TEST_DATA); }

fs::path scratch_dir() {
  fs::path d = fs::temp_directory_path() / ("qf_cuda_model_" + std::to_string(::getpid()));
  fs::create_directories(d);
  return d;
}

std::vector<int32_t> greedy(context& ctx, std::vector<int32_t> prompt, int n, std::vector<std::vector<float>>* logits) {
  std::vector<int32_t> out;
  ctx.eval(prompt, logits_mode::last, cancel_token{});
  for (int i = 0; i < n; ++i) {
    auto l = ctx.logits(0);
    if (logits) logits->emplace_back(l.begin(), l.end());
    int32_t best = 0;
    for (int32_t j = 1; j < int32_t(l.size()); ++j)
      if (l[size_t(j)] > l[size_t(best)]) best = j;
    out.push_back(best);
    const int32_t t[1] = {best};
    ctx.eval(t, logits_mode::last, cancel_token{});
  }
  return out;
}

double nmse(const std::vector<float>& a, const std::vector<float>& b) {
  double num = 0, den = 0;
  for (size_t i = 0; i < b.size(); ++i) {
    num += (double(a[i]) - b[i]) * (double(a[i]) - b[i]);
    den += double(b[i]) * b[i];
  }
  return den > 0 ? num / den : num;
}

void compare_backends(const std::string& path, const std::vector<int32_t>& prompt, int n_gen, double bound,
                      bool expect_same_tokens, ggml_type kv_type = ggml_type::f16) {
  model_options cpu_opts;
  cpu_opts.device = "cpu";
  model_options gpu_opts;
  gpu_opts.device = "cuda";
  auto mc = model::load(path, cpu_opts);
  auto mg = model::load(path, gpu_opts);
  context_options co;
  co.n_ctx = 512;
  co.kv_type = kv_type;
  context cc(*mc, co), cg(*mg, co);

  // Prefill logits at every position.
  cc.eval(prompt, logits_mode::all, cancel_token{});
  cg.eval(prompt, logits_mode::all, cancel_token{});
  for (int64_t i = 0; i < int64_t(prompt.size()); ++i) {
    auto a = cc.logits(i), b = cg.logits(i);
    EXPECT_LT(nmse(std::vector<float>(b.begin(), b.end()), std::vector<float>(a.begin(), a.end())), bound)
        << "prefill position " << i;
  }
  cc.clear();
  cg.clear();

  // Greedy decode: logits along the CPU's path, and the tokens themselves.
  std::vector<std::vector<float>> lc, lg;
  const auto tc = greedy(cc, prompt, n_gen, &lc);
  const auto tg = greedy(cg, prompt, n_gen, &lg);
  size_t same = 0;
  while (same < tc.size() && tc[same] == tg[same]) ++same;
  for (size_t i = 0; i < same; ++i) EXPECT_LT(nmse(lg[i], lc[i]), bound) << "decode step " << i;
  if (expect_same_tokens) {
    EXPECT_EQ(tc, tg);
  }
  EXPECT_TRUE(cg.step_graphs_active()) << "decode steps fell back to direct launches";
  std::printf("[cuda vs cpu] %s: %zu/%zu greedy tokens identical\n", path.c_str(), same, tc.size());
}

TEST(CudaModel, SyntheticModelsOfEveryArchitectureMatchCpu) {
  if (cuda::device_count() == 0) GTEST_SKIP() << "no CUDA device";
  const auto dir = scratch_dir();
  for (const std::string arch : {"qwen2", "llama", "qwen3", "starcoder2", "gemma", "granite"}) {
    auto spec = convert::synth_preset("tiny", arch);
    spec.init_std = 0.2f;  // peaked logits so greedy choices are well separated
    for (ggml_type t : {ggml_type::f32, ggml_type::f16}) {
      const auto path = (dir / (arch + "_" + std::string(traits(t).name) + ".gguf")).string();
      convert::write_synth_model(spec, t, path);
      compare_backends(path, {1, 17, 42, 99, 7, 300, 12, 5}, 24, 1e-4, false);
    }
  }
  fs::remove_all(dir);
}

// Decode steps replayed from CUDA graphs give what direct launches give, at
// every position (across attention split boundaries of 256 keys), after a
// rewind, for speculative verification batches, and with the argmax reduced
// on the device. Also: an F32 KV cache on the GPU agrees with the CPU's.
TEST(CudaModel, StepGraphsMatchDirectLaunches) {
  if (cuda::device_count() == 0) GTEST_SKIP() << "no CUDA device";
  const auto dir = scratch_dir();
  for (const std::string arch : {"qwen2", "llama", "qwen3", "starcoder2", "gemma", "granite"}) {
    auto spec = convert::synth_preset("tiny", arch);
    spec.init_std = 0.2f;
    const auto path = (dir / (arch + "_graphs.gguf")).string();
    convert::write_synth_model(spec, ggml_type::f16, path + ".f16");  // synthetic files are float
    gguf::quantize_model(path + ".f16", path, "q8_0", 2);
    model_options gpu;
    gpu.device = "cuda";
    auto m = model::load(path, gpu);
    context_options with, without;
    with.n_ctx = without.n_ctx = 1024;
    with.step_graphs = true;
    without.step_graphs = false;
    context g(*m, with), d(*m, without);
    ASSERT_TRUE(g.step_graphs_active());
    std::vector<int32_t> prompt(240);
    for (size_t i = 0; i < prompt.size(); ++i) prompt[i] = int32_t((i * 37 + 11) % 300);
    g.eval(prompt, logits_mode::last);
    d.eval(prompt, logits_mode::last);
    int32_t tok = d.argmax(0);
    // n greedy steps on both contexts; replayed and direct logits must agree.
    auto decode_both = [&](int n, const std::string& what) {
      for (int i = 0; i < n; ++i) {
        const int32_t t[1] = {tok};
        g.eval(t, logits_mode::last);
        d.eval(t, logits_mode::last);
        auto a = g.logits(0), b = d.logits(0);
        ASSERT_LT(nmse(std::vector<float>(a.begin(), a.end()), std::vector<float>(b.begin(), b.end())), 1e-12)
            << arch << " " << what << ", step " << i;
        tok = d.argmax(0);
      }
    };
    decode_both(40, "decode");  // positions 240..279 cross the 256-key split boundary
    EXPECT_GE(g.n_step_graphs(), 1u);

    // A long prefill in another context grows the attention scratch the
    // recorded graphs point at: they must be recorded again, not replayed.
    {
      context_options big;
      big.n_ctx = 1024;
      context other(*m, big);
      std::vector<int32_t> longp(900);
      for (size_t i = 0; i < longp.size(); ++i) longp[i] = int32_t((i * 13 + 5) % 300);
      other.eval(longp, logits_mode::last);
    }
    decode_both(5, "after scratch growth");
    g.keep_first(100);
    d.keep_first(100);
    for (int round = 0; round < 3; ++round) {
      const std::vector<int32_t> batch = {tok, int32_t((tok + 1) % 300), int32_t((tok + 2) % 300)};
      const int64_t base = g.n_past();
      g.eval(batch, logits_mode::all, cancel_token{}, output_kind::argmax);
      d.eval(batch, logits_mode::all);
      for (int64_t i = 0; i < 3; ++i) EXPECT_EQ(g.argmax(i), d.argmax(i)) << arch << " round " << round;
      g.keep_first(base + 1);
      d.keep_first(base + 1);
      tok = d.argmax(0);
    }
    EXPECT_TRUE(g.step_graphs_active());

    // F32 KV cache: GPU against CPU, F32 weights.
    const auto path32 = (dir / (arch + "_f32kv.gguf")).string();
    convert::write_synth_model(spec, ggml_type::f32, path32);
    compare_backends(path32, {1, 17, 42, 99, 7, 300, 12, 5}, 16, 1e-4, false, ggml_type::f32);
  }
  fs::remove_all(dir);
}

TEST(CudaModel, Stories260KGreedyMatchesCpu) {
  if (cuda::device_count() == 0) GTEST_SKIP() << "no CUDA device";
  const auto data = test_data() / "stories260K";
  if (!fs::exists(data / "stories260K.bin")) GTEST_SKIP() << "shared test data not found at " << data;
  const auto dir = scratch_dir();
  const auto path = (dir / "stories260K.gguf").string();
  convert::convert_llama2c((data / "stories260K.bin").string(), (data / "tok512.bin").string(), path, ggml_type::f32);
  compare_backends(path, {1}, 199, 1e-5, true);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace qf::infer
