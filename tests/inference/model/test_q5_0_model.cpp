// End to end for the 32-element fallback types: a tiny synthetic qwen2 model
// whose n_embd (160) is not a multiple of 256 is quantized with the q4_k_m
// recipe, which (as llama.cpp) stores the 160-column matrices as Q5_0 and the
// Q6_K ones as Q8_0; the file loads through model::load and its logits, for a
// prefill and the decode steps after it, stay close to the F32 model's. The
// q4_1, q5_0 and q5_1 recipes are checked the same way. (On this random
// model the logit error is about 5x the weights' round-trip NMSE; a wrong
// layout or kernel gives NMSE near 1.)
#include <gtest/gtest.h>

#include <map>
#include <tuple>
#include <vector>

#include "inference/convert/synth_model.h"
#include "inference/gguf/gguf.h"
#include "inference/convert/quantize_model.h"
#include "inference/model/context.h"
#include "inference/model/model.h"
#include "tests/temp_file.h"
#include "tests/inference/backend/cpu/kernel_test_util.h"

using namespace qf::infer;

namespace {

convert::synth_spec tiny_qwen2() {
  auto s = convert::synth_preset("tiny", "qwen2");
  s.n_embd = 160, s.n_head = 4, s.n_head_kv = 2, s.n_ff = 256, s.n_layer = 2, s.n_vocab = 512;
  s.init_std = 0.05f;
  return s;
}

// Logits of a 7-token prefill (all rows) and 3 decode steps after it.
std::vector<float> run(const std::string& path) {
  model_options mo;
  mo.n_threads = 2;
  mo.device = "cpu";
  auto m = model::load(path, mo);
  context_options co;
  co.n_ctx = 64;
  context ctx(*m, co);
  const std::vector<int32_t> prompt = {5, 77, 300, 12, 499, 250, 64};
  std::vector<float> out;
  ctx.eval(prompt, logits_mode::all);
  for (int64_t i = 0; i < static_cast<int64_t>(prompt.size()); ++i) {
    auto l = ctx.logits(i);
    out.insert(out.end(), l.begin(), l.end());
  }
  for (int32_t tok : {9, 410, 33}) {
    const int32_t one[1] = {tok};
    ctx.eval(one, logits_mode::last);
    auto l = ctx.logits();
    out.insert(out.end(), l.begin(), l.end());
  }
  return out;
}

std::map<ggml_type, int> matrix_types(const std::string& path) {
  auto f = gguf::file::open(path);
  std::map<ggml_type, int> n;
  for (const auto& t : f->tensors())
    if (t.ne.size() == 2) n[t.type]++;
  return n;
}

}  // namespace

TEST(q5_0_model, q4_k_m_file_with_q5_0_matrices_loads_and_matches_f32) {
  qf::test::temp_file f32("q50_f32"), q("q50_q4km");
  convert::write_synth_model(tiny_qwen2(), ggml_type::f32, f32.path());
  gguf::quantize_model(f32.path(), q.path(), "q4_k_m", 2);
  auto types = matrix_types(q.path());
  // attn_q/k/v/output, ffn_gate/up (160 columns) -> Q5_0, except attn_v in
  // the "more bits" layers and the tied classifier (Q6_K -> Q8_0); ffn_down
  // (256 columns) keeps Q4_K/Q6_K.
  EXPECT_GE(types[ggml_type::q5_0], 8);
  EXPECT_GE(types[ggml_type::q8_0], 1);
  EXPECT_EQ(types[ggml_type::f32], 0);
  const auto ref = run(f32.path());
  const auto got = run(q.path());
  ASSERT_EQ(ref.size(), got.size());
  const double e = qf::test::nmse(got, ref);
  std::printf("[ nmse ] q4_k_m (Q5_0/Q8_0/Q4_K/Q6_K) logits vs f32: %.3g\n", e);
  EXPECT_LT(e, 3e-2);
  EXPECT_GT(e, 0.0);  // the quantized file really differs
}

TEST(q5_0_model, q4_1_and_q5_1_files_load_and_match_f32) {
  qf::test::temp_file f32("q51_f32"), q("q51_q");
  convert::write_synth_model(tiny_qwen2(), ggml_type::f32, f32.path());
  const auto ref = run(f32.path());
  for (auto [recipe, type, bound] : {std::tuple{"q4_1", ggml_type::q4_1, 1e-1}, std::tuple{"q5_1", ggml_type::q5_1, 2e-2},
                                     std::tuple{"q5_0", ggml_type::q5_0, 4e-2}}) {
    gguf::quantize_model(f32.path(), q.path(), recipe, 2);
    EXPECT_GE(matrix_types(q.path())[type], 10) << recipe;
    const auto got = run(q.path());
    ASSERT_EQ(ref.size(), got.size());
    const double e = qf::test::nmse(got, ref);
    std::printf("[ nmse ] %s logits vs f32: %.3g\n", recipe, e);
    EXPECT_LT(e, bound) << recipe;
  }
}
