// What the architectures beyond llama/qwen2 add, each against the
// double-precision reference: qwen3's per-head q/k norms with a head size
// that is not n_embd / n_head, starcoder2 tied and untied, granite's
// multipliers; YaRN rope scaling; and per architecture the load errors for a
// missing tensor and for a tensor the architecture does not have.
#include <gtest/gtest.h>

#include "inference/model/architecture.h"
#include "inference/model/context.h"
#include "tests/inference/model/model_test_util.h"
#include "tests/inference/model/reference.h"

namespace qf::test {
namespace {

using infer::context;
using infer::ggml_type;
using infer::logits_mode;

void expect_matches_reference(const synth_model& sm, const std::string& name, int64_t n_tok, double tol = 1e-4) {
  auto m = load_synth(sm, name);
  const auto toks = some_tokens(n_tok, sm.n_vocab, 31);
  const auto ref = reference_logits(sm, toks);
  context ctx(*m, {.n_ctx = 64, .kv_type = ggml_type::f32});
  ctx.eval(toks, logits_mode::all);
  for (int64_t i = 0; i < n_tok; ++i) EXPECT_LT(rel_diff(ctx.logits(i), ref[i]), tol) << name << " position " << i;
}

TEST(archs, qwen3_key_length_wider_than_embd_per_head) {
  synth_config c;
  c.arch = "qwen3";
  c.head_dim = 32;  // q is 4 x 32 = 128 wide on a 64-wide model, as Qwen3 (head 128) does
  c.tied = true;
  c.rope_base = 1000000.0f;
  const synth_model sm = make_synth(c);
  auto m = load_synth(sm, "qwen3_hd32");
  EXPECT_EQ(m->hp().head_dim, 32);
  EXPECT_EQ(m->hp().n_embd_q(), 128);
  expect_matches_reference(sm, "qwen3_hd32_ref", 20);
  // and the q/k norms matter: the reference without them differs
  synth_model plain = sm;
  for (auto& L : plain.layers) L.q_norm.assign(L.q_norm.size(), 1.0f), L.k_norm.assign(L.k_norm.size(), 1.0f);
  const auto toks = some_tokens(20, sm.n_vocab, 31);
  context ctx(*m, {.n_ctx = 32, .kv_type = ggml_type::f32});
  ctx.eval(toks, logits_mode::all);
  EXPECT_GT(rel_diff(ctx.logits(19), reference_logits(plain, toks)[19]), 1e-3);
}

TEST(archs, starcoder2_tied_and_untied) {
  for (bool tied : {false, true}) {
    synth_config c;
    c.arch = "starcoder2";
    c.tied = tied;
    const synth_model sm = make_synth(c);
    auto m = load_synth(sm, tied ? "sc2_tied" : "sc2_untied");
    EXPECT_EQ(m->hp().tied_embeddings, tied);
    expect_matches_reference(sm, tied ? "sc2_tied_ref" : "sc2_untied_ref", 16);
  }
}

TEST(archs, granite_multipliers_come_from_metadata) {
  synth_config c;
  c.arch = "granite";
  const synth_model sm = make_synth(c);
  auto m = load_synth(sm, "granite_hp");
  EXPECT_FLOAT_EQ(m->hp().embd_scale, c.embd_scale);
  EXPECT_FLOAT_EQ(m->hp().residual_scale, c.residual_scale);
  EXPECT_FLOAT_EQ(m->hp().kq_scale(), c.attn_scale);
  EXPECT_FLOAT_EQ(m->hp().logit_scale, c.logit_scale);
  // Without the multipliers the reference is another model.
  synth_model llama_like = sm;
  llama_like.cfg.arch = "llama";
  const auto toks = some_tokens(12, sm.n_vocab, 5);
  context ctx(*m, {.n_ctx = 16, .kv_type = ggml_type::f32});
  ctx.eval(toks, logits_mode::all);
  EXPECT_GT(rel_diff(ctx.logits(11), reference_logits(llama_like, toks)[11]), 1e-2);
}

TEST(archs, gemma_scales_embeddings_and_has_no_output_tensor) {
  synth_config c;
  c.arch = "gemma";
  c.tied = true;
  const synth_model sm = make_synth(c);
  auto m = load_synth(sm, "gemma_hp");
  EXPECT_FLOAT_EQ(m->hp().embd_scale, 8.0f);  // sqrt(64)
  EXPECT_TRUE(m->hp().tied_embeddings);
}

// YaRN: pairs below the correction range keep their angle, pairs above are
// interpolated by 1/factor, and cos/sin carry mscale, as in the reference.
TEST(archs, yarn_matches_reference) {
  for (const char* arch : {"llama", "qwen2", "qwen3"}) {
    synth_config c;
    c.arch = arch;
    c.yarn = true;
    c.yarn_factor = 4;
    c.yarn_orig_ctx = 64;  // correction range inside the 8 pairs of head 16 at base 10000
    c.yarn_beta_fast = 8;
    c.yarn_beta_slow = 0.5f;
    c.yarn_attn_factor = std::string(arch) == "qwen2" ? 0.9f : 0.0f;
    const synth_model sm = make_synth(c);
    auto m = load_synth(sm, std::string("yarn_") + arch);
    EXPECT_FLOAT_EQ(m->hp().rope_freq_scale, 0.25f);
    EXPECT_FLOAT_EQ(m->hp().rope_ext_factor, 1.0f);
    EXPECT_EQ(m->hp().n_ctx_orig, 64);
    const infer::rope_params rp = infer::rope_params_of(*m);
    EXPECT_GT(rp.corr_high, rp.corr_low);  // a real ramp, not all-or-nothing
    expect_matches_reference(sm, std::string("yarn_ref_") + arch, 40);
    // and it is not plain linear scaling or none
    synth_model none = sm;
    none.cfg.yarn = false;
    const auto toks = some_tokens(40, sm.n_vocab, 31);
    context ctx(*m, {.n_ctx = 64, .kv_type = ggml_type::f32});
    ctx.eval(toks, logits_mode::all);
    EXPECT_GT(rel_diff(ctx.logits(39), reference_logits(none, toks)[39]), 1e-3) << arch;
  }
}

// Decode after a long prefill with YaRN matches the prefill (the KV cache
// holds keys with the YaRN magnitude once).
TEST(archs, yarn_decode_matches_prefill) {
  synth_config c;
  c.arch = "qwen2";
  c.yarn = true;
  c.yarn_orig_ctx = 64;
  const synth_model sm = make_synth(c);
  auto m = load_synth(sm, "yarn_dec");
  const auto toks = some_tokens(12, sm.n_vocab, 3);
  context pre(*m, {.n_ctx = 16});
  pre.eval(toks, logits_mode::all);
  context dec(*m, {.n_ctx = 16});
  for (size_t i = 0; i < toks.size(); ++i) {
    dec.eval(std::span(&toks[i], 1), logits_mode::last);
    EXPECT_LT(rel_diff(dec.logits(), pre.logits(static_cast<int64_t>(i))), 1e-4) << i;
  }
}

TEST(archs, yarn_needs_a_factor_of_at_least_one) {
  synth_config c;
  c.yarn = true;
  c.yarn_factor = 0.5f;
  const synth_model sm = make_synth(c);
  try {
    load_synth(sm, "yarn_bad_factor");
    ADD_FAILURE() << "loaded";
  } catch (const infer::model_error& e) {
    EXPECT_NE(std::string(e.what()).find("rope.scaling.factor"), std::string::npos) << e.what();
  }
}

// ---- load errors per architecture ----

struct arch_case {
  const char* arch;
  const char* missing;     // a tensor the architecture needs
  const char* unexpected;  // a tensor it does not have (written as an f32 vector)
  int64_t unexpected_len;
};
void PrintTo(const arch_case& a, std::ostream* os) { *os << a.arch; }

std::string load_error(const synth_model& sm, const std::string& name, const write_options& wo) {
  const std::string path = temp_path(name + ".gguf");
  write_gguf(sm, path, wo);
  infer::model_options mo;
  mo.n_threads = 1;
  mo.device = "cpu";
  try {
    infer::model::load(path, mo);
  } catch (const infer::model_error& e) {
    return e.what();
  }
  return "no error";
}

class arch_load_errors : public ::testing::TestWithParam<arch_case> {};

TEST_P(arch_load_errors, missing_and_unexpected_tensors_are_named) {
  const arch_case& a = GetParam();
  synth_config c;
  c.arch = a.arch;
  c.tied = std::string(a.arch) == "gemma";
  const synth_model sm = make_synth(c);
  ASSERT_NO_THROW(load_synth(sm, std::string("ok_") + a.arch));

  write_options missing;
  missing.omit = {a.missing};
  std::string e = load_error(sm, std::string("missing_") + a.arch, missing);
  EXPECT_NE(e.find(a.missing), std::string::npos) << e;
  EXPECT_NE(e.find("missing"), std::string::npos) << e;

  write_options extra;
  extra.extra = {{a.unexpected, a.unexpected_len}};
  e = load_error(sm, std::string("extra_") + a.arch, extra);
  EXPECT_NE(e.find(a.unexpected), std::string::npos) << e;
  EXPECT_NE(e.find("unexpected"), std::string::npos) << e;
  EXPECT_NE(e.find(a.arch), std::string::npos) << e;
}

INSTANTIATE_TEST_SUITE_P(
    archs, arch_load_errors,
    ::testing::Values(arch_case{"llama", "blk.0.attn_norm.weight", "blk.0.attn_q_norm.weight", 16},
                      arch_case{"qwen2", "blk.1.attn_v.bias", "blk.0.attn_output.bias", 64},
                      arch_case{"qwen3", "blk.1.attn_k_norm.weight", "blk.0.attn_q.bias", 64},
                      arch_case{"starcoder2", "blk.0.ffn_up.bias", "rope_freqs.weight", 8},
                      arch_case{"gemma", "blk.1.ffn_gate.weight", "blk.0.attn_norm.bias", 64},
                      arch_case{"granite", "blk.1.ffn_down.weight", "blk.1.attn_k_norm.weight", 16}),
    [](const auto& info) { return std::string(info.param.arch); });

// A gemma file with output.weight is not a gemma file (llama.cpp's converter
// never writes one): refused by name rather than silently ignored.
TEST(archs, gemma_with_output_tensor_is_refused) {
  synth_config c;
  c.arch = "gemma";
  c.tied = false;
  const synth_model sm = make_synth(c);
  const std::string e = load_error(sm, "gemma_output", {});
  EXPECT_NE(e.find("output.weight"), std::string::npos) << e;
}

}  // namespace
}  // namespace qf::test
