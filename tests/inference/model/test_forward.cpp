// Forward pass: engine logits against the double-precision reference, prefill
// against token-by-token decode, ubatch splitting, logits modes, quantized vs
// float weights, for every architecture.
#include <gtest/gtest.h>

#include "inference/model/context.h"
#include "inference/tokenizer/tokenizer.h"
#include "tests/inference/model/reference.h"
#include "tests/inference/model/model_test_util.h"

namespace qf::test {
namespace {

using infer::context;
using infer::context_options;
using infer::ggml_type;
using infer::logits_mode;

synth_config cfg_for(const std::string& arch) {
  synth_config c;
  c.arch = arch;
  if (arch == "qwen2" || arch == "qwen3") {
    c.tied = true;
    c.rope_base = 1000000.0f;
    c.rms_eps = 1e-6f;
  } else if (arch == "starcoder2") {
    c.rope_base = 100000.0f;
  } else if (arch == "gemma") {
    c.tied = true;  // always: gemma files have no output.weight
    c.rms_eps = 1e-6f;
  }
  return c;
}

class forward : public ::testing::TestWithParam<std::string> {};

TEST_P(forward, hparams_from_metadata) {
  const synth_model sm = make_synth(cfg_for(GetParam()));
  auto m = load_synth(sm, GetParam() + "_hp");
  const auto& hp = m->hp();
  EXPECT_EQ(hp.arch, GetParam());
  EXPECT_EQ(hp.n_vocab, sm.n_vocab);
  EXPECT_EQ(hp.n_embd, 64);
  EXPECT_EQ(hp.n_layer, 2);
  EXPECT_EQ(hp.n_head, 4);
  EXPECT_EQ(hp.n_head_kv, 2);
  EXPECT_EQ(hp.head_dim, 16);
  EXPECT_EQ(hp.n_ff, 96);
  EXPECT_EQ(hp.n_ctx_train, 512);
  EXPECT_FLOAT_EQ(hp.rms_eps, sm.cfg.rms_eps);
  EXPECT_FLOAT_EQ(hp.rope_freq_base, sm.cfg.rope_base);
  EXPECT_EQ(hp.tied_embeddings, sm.cfg.tied);
  const bool adjacent = GetParam() == "llama" || GetParam() == "granite";
  EXPECT_EQ(hp.rope, adjacent ? infer::rope_style::norm : infer::rope_style::neox);
  EXPECT_EQ(m->vocab().n_vocab(), sm.n_vocab);
  EXPECT_NE(m->describe().find(GetParam()), std::string::npos) << m->describe();
  EXPECT_NE(m->describe().find("on cpu"), std::string::npos) << m->describe();
}

TEST_P(forward, prefill_matches_reference) {
  const synth_model sm = make_synth(cfg_for(GetParam()));
  auto m = load_synth(sm, GetParam() + "_ref");
  const auto toks = some_tokens(24, sm.n_vocab);
  const auto ref = reference_logits(sm, toks);
  for (ggml_type kv : {ggml_type::f32, ggml_type::f16}) {
    context ctx(*m, {.n_ctx = 64, .kv_type = kv, .n_ubatch = 512});
    auto r = ctx.eval(toks, logits_mode::all);
    ASSERT_EQ(r.n_evaluated, 24);
    ASSERT_EQ(ctx.n_logits_rows(), 24);
    const double tol = kv == ggml_type::f32 ? 1e-4 : 5e-3;
    for (int64_t i = 0; i < 24; ++i) EXPECT_LT(rel_diff(ctx.logits(i), ref[i]), tol) << "position " << i;
  }
}

TEST_P(forward, decode_matches_prefill) {
  const synth_model sm = make_synth(cfg_for(GetParam()));
  auto m = load_synth(sm, GetParam() + "_dec");
  const auto toks = some_tokens(20, sm.n_vocab, 3);
  context pre(*m, {.n_ctx = 32});
  pre.eval(toks, logits_mode::all);
  context dec(*m, {.n_ctx = 32});
  for (size_t i = 0; i < toks.size(); ++i) {
    auto r = dec.eval(std::span(&toks[i], 1), logits_mode::last);
    ASSERT_EQ(r.n_evaluated, 1);
    EXPECT_LT(rel_diff(dec.logits(), pre.logits(static_cast<int64_t>(i))), 1e-4) << "position " << i;
  }
  EXPECT_EQ(dec.tokens(), pre.tokens());
}

TEST_P(forward, ubatch_split_is_invisible) {
  const synth_model sm = make_synth(cfg_for(GetParam()));
  auto m = load_synth(sm, GetParam() + "_ub");
  const auto toks = some_tokens(23, sm.n_vocab, 5);
  context whole(*m, {.n_ctx = 32, .n_ubatch = 512});
  whole.eval(toks, logits_mode::all);
  context split(*m, {.n_ctx = 32, .n_ubatch = 5});
  auto r = split.eval(toks, logits_mode::all);
  EXPECT_EQ(r.n_evaluated, 23);
  ASSERT_EQ(split.n_logits_rows(), 23);
  for (int64_t i = 0; i < 23; ++i) EXPECT_LT(rel_diff(split.logits(i), whole.logits(i)), 1e-5) << i;
  // mode last: only the final token's logits
  context last(*m, {.n_ctx = 32, .n_ubatch = 5});
  last.eval(toks, logits_mode::last);
  EXPECT_EQ(last.n_logits_rows(), 1);
  EXPECT_LT(rel_diff(last.logits(), whole.logits(22)), 1e-5);
  EXPECT_TRUE(last.logits(1).empty());
  // mode none: no logits, tokens still cached
  context none(*m, {.n_ctx = 32, .n_ubatch = 5});
  none.eval(toks, logits_mode::none);
  EXPECT_EQ(none.n_logits_rows(), 0);
  EXPECT_TRUE(none.logits().empty());
  EXPECT_EQ(none.n_past(), 23);
}

TEST_P(forward, single_thread_equals_two_threads) {
  const synth_model sm = make_synth(cfg_for(GetParam()));
  auto m1 = load_synth(sm, GetParam() + "_t1", 1);
  auto m2 = load_synth(sm, GetParam() + "_t2", 2);
  const auto toks = some_tokens(17, sm.n_vocab, 11);
  context a(*m1, {.n_ctx = 32}), b(*m2, {.n_ctx = 32});
  a.eval(toks, logits_mode::all);
  b.eval(toks, logits_mode::all);
  for (int64_t i = 0; i < 17; ++i) EXPECT_LT(rel_diff(a.logits(i), b.logits(i)), 1e-5) << i;
}

TEST_P(forward, q8_0_weights_close_to_f32) {
  synth_config c = cfg_for(GetParam());
  const synth_model f32m = make_synth(c);
  c.wtype = ggml_type::q8_0;
  const synth_model q8m = make_synth(c);  // same seed: same float weights
  auto mf = load_synth(f32m, GetParam() + "_f32");
  auto mq = load_synth(q8m, GetParam() + "_q8");
  EXPECT_LT(mq->weight_bytes(), mf->weight_bytes());
  const auto toks = some_tokens(16, f32m.n_vocab, 9);
  context a(*mf, {.n_ctx = 32}), b(*mq, {.n_ctx = 32});
  a.eval(toks, logits_mode::all);
  b.eval(toks, logits_mode::all);
  for (int64_t i = 0; i < 16; ++i) {
    const double d = rel_diff(b.logits(i), a.logits(i));
    EXPECT_LT(d, 0.05) << i;
    EXPECT_GT(d, 0.0) << "quantization should change something";
  }
}

TEST_P(forward, rejects_bad_tokens_and_overflow) {
  const synth_model sm = make_synth(cfg_for(GetParam()));
  auto m = load_synth(sm, GetParam() + "_bad");
  context ctx(*m, {.n_ctx = 8});
  const std::vector<int32_t> bad{1, static_cast<int32_t>(sm.n_vocab)};
  EXPECT_THROW(ctx.eval(bad, logits_mode::last), infer::model_error);
  const std::vector<int32_t> neg{-1};
  EXPECT_THROW(ctx.eval(neg, logits_mode::last), infer::model_error);
  EXPECT_EQ(ctx.n_past(), 0);
  const auto nine = some_tokens(9, sm.n_vocab);
  EXPECT_THROW(ctx.eval(nine, logits_mode::last), infer::model_error);
  const auto eight = some_tokens(8, sm.n_vocab);
  EXPECT_EQ(ctx.eval(eight, logits_mode::last).n_evaluated, 8);
  EXPECT_THROW(ctx.eval(std::span(eight.data(), 1), logits_mode::last), infer::model_error);
  EXPECT_EQ(ctx.kv_bytes(), size_t{2} * 2 * 8 * 32 * 2);  // layers * (K,V) * cells * n_embd_kv * f16
}

INSTANTIATE_TEST_SUITE_P(archs, forward, ::testing::Values("llama", "qwen2", "qwen3", "starcoder2", "gemma", "granite"));

// A llama with a tied classifier (as llama2.c checkpoints) also matches the reference.
TEST(forward_llama, tied_classifier_matches_reference) {
  synth_config c = cfg_for("llama");
  c.tied = true;
  c.n_head_kv = 4;  // plain multi-head attention
  const synth_model sm = make_synth(c);
  auto m = load_synth(sm, "llama_tied");
  EXPECT_TRUE(m->hp().tied_embeddings);
  const auto toks = some_tokens(12, sm.n_vocab, 21);
  const auto ref = reference_logits(sm, toks);
  context ctx(*m, {.n_ctx = 16, .kv_type = ggml_type::f32});
  ctx.eval(toks, logits_mode::all);
  for (int64_t i = 0; i < 12; ++i) EXPECT_LT(rel_diff(ctx.logits(i), ref[i]), 1e-4) << i;
}

// Llama 3.1-style rope frequency factors (rope_freqs.weight) divide the angles.
TEST(forward_llama, rope_freq_factors_match_reference) {
  synth_config c = cfg_for("llama");
  c.rope_freqs = true;
  const synth_model sm = make_synth(c);
  auto m = load_synth(sm, "llama_rope_freqs");
  const auto toks = some_tokens(20, sm.n_vocab, 23);
  const auto ref = reference_logits(sm, toks);
  context ctx(*m, {.n_ctx = 32, .kv_type = ggml_type::f32});
  ctx.eval(toks, logits_mode::all);
  for (int64_t i = 0; i < 20; ++i) EXPECT_LT(rel_diff(ctx.logits(i), ref[i]), 1e-4) << i;
  // and the factors matter: without them the logits differ
  synth_model plain = sm;
  plain.rope_freqs.clear();
  const auto ref_plain = reference_logits(plain, toks);
  EXPECT_GT(rel_diff(ctx.logits(19), ref_plain[19]), 1e-3);
}

}  // namespace
}  // namespace qf::test
