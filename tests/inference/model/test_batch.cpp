// Several sequences in one forward pass (inference/model/batch.h): every
// entry's outputs equal what its context gives alone — logits within the
// tolerance of the reference tests, greedy tokens identical — for B = 1..8
// sequences at different lengths and positions, on every architecture, with
// prefill chunks mixed with decode tokens, passes split by max_rows, and one
// sequence cancelled part-way while the others go on unchanged.
#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "inference/model/batch.h"
#include "inference/model/context.h"
#include "tests/inference/model/model_test_util.h"

namespace qf::test {
namespace {

using infer::batch;
using infer::batch_entry;
using infer::context;
using infer::ggml_type;
using infer::logits_mode;
using infer::output_kind;

constexpr double k_tol = 1e-4;  // as the reference-forward tests

batch_entry entry(context* ctx, std::span<const int32_t> toks, logits_mode mode = logits_mode::last,
                  cancel_token cancel = {}) {
  batch_entry e;
  e.ctx = ctx;
  e.tokens = toks;
  e.mode = mode;
  e.cancel = std::move(cancel);
  return e;
}

// What one sequence gives alone: logits after its prompt, then greedy steps.
struct solo_run {
  std::vector<std::vector<float>> logits;  // [0]: after the prompt; [s]: after step s
  std::vector<int32_t> tokens;             // greedy tokens fed at each step
};

solo_run run_alone(const infer::model& m, const std::vector<int32_t>& prompt, int steps, ggml_type kv) {
  context ctx(m, {.n_ctx = 128, .kv_type = kv});
  solo_run r;
  ctx.eval(prompt, logits_mode::last);
  r.logits.push_back(copy(ctx.logits(0)));
  for (int s = 0; s < steps; ++s) {
    const int32_t t = ctx.argmax(0);
    r.tokens.push_back(t);
    const int32_t one[1] = {t};
    ctx.eval(one, logits_mode::last);
    r.logits.push_back(copy(ctx.logits(0)));
  }
  return r;
}

std::vector<std::vector<int32_t>> prompts_of(int n, int64_t n_vocab) {
  std::vector<std::vector<int32_t>> p;
  for (int i = 0; i < n; ++i) p.push_back(some_tokens(3 + 5 * i, n_vocab, 100 + static_cast<uint32_t>(i)));
  return p;
}

// B sequences: one batched prefill of different prompt lengths, then greedy
// decode steps in lockstep, each step one batch; compared with each alone.
void expect_batch_equals_alone(const infer::model& m, int B, int steps, ggml_type kv, int64_t max_rows,
                               const std::string& what) {
  const auto prompts = prompts_of(B, m.hp().n_vocab);
  std::vector<solo_run> alone;
  for (const auto& p : prompts) alone.push_back(run_alone(m, p, steps, kv));

  std::vector<std::unique_ptr<context>> ctxs;
  for (int i = 0; i < B; ++i) ctxs.push_back(std::make_unique<context>(m, infer::context_options{.n_ctx = 128, .kv_type = kv}));
  batch bt(m, max_rows);
  std::vector<batch_entry> es(static_cast<size_t>(B));
  for (int i = 0; i < B; ++i) es[static_cast<size_t>(i)] = entry(ctxs[static_cast<size_t>(i)].get(), prompts[static_cast<size_t>(i)]);
  bt.eval(es, output_kind::logits);
  for (int i = 0; i < B; ++i) {
    ASSERT_EQ(es[static_cast<size_t>(i)].result.n_evaluated, static_cast<int64_t>(prompts[static_cast<size_t>(i)].size()));
    ASSERT_EQ(ctxs[static_cast<size_t>(i)]->tokens(), prompts[static_cast<size_t>(i)]);
    EXPECT_LT(rel_diff(ctxs[static_cast<size_t>(i)]->logits(0), alone[static_cast<size_t>(i)].logits[0]), k_tol)
        << what << " B=" << B << " sequence " << i << " prompt";
  }
  std::vector<int32_t> next(static_cast<size_t>(B));
  for (int s = 0; s < steps; ++s) {
    for (int i = 0; i < B; ++i) {
      next[static_cast<size_t>(i)] = ctxs[static_cast<size_t>(i)]->argmax(0);
      ASSERT_EQ(next[static_cast<size_t>(i)], alone[static_cast<size_t>(i)].tokens[static_cast<size_t>(s)])
          << what << " B=" << B << " sequence " << i << " step " << s;
      es[static_cast<size_t>(i)] = entry(ctxs[static_cast<size_t>(i)].get(), std::span<const int32_t>(&next[static_cast<size_t>(i)], 1));
    }
    bt.eval(es, output_kind::logits);
    for (int i = 0; i < B; ++i)
      EXPECT_LT(rel_diff(ctxs[static_cast<size_t>(i)]->logits(0), alone[static_cast<size_t>(i)].logits[static_cast<size_t>(s + 1)]), k_tol)
          << what << " B=" << B << " sequence " << i << " step " << s;
  }
}

TEST(batch, every_architecture_b1_to_8_equals_alone) {
  for (const char* arch : {"llama", "qwen2", "qwen3", "starcoder2", "gemma", "granite"}) {
    synth_config c;
    c.arch = arch;
    c.tied = std::string(arch) == "gemma";  // gemma always ties its classifier
    const synth_model sm = make_synth(c);
    auto m = load_synth(sm, std::string("batch_") + arch);
    for (int B : {1, 2, 3, 5, 8}) expect_batch_equals_alone(*m, B, 4, ggml_type::f32, 64, arch);
  }
}

TEST(batch, quantized_weights_and_f16_cache_keep_greedy_text) {
  synth_config c;
  c.arch = "qwen2";
  c.n_embd = 128;
  c.n_ff = 256;
  c.wtype = ggml_type::q8_0;
  const synth_model sm = make_synth(c);
  auto m = load_synth(sm, "batch_q8");
  // One row alone takes the GEMV path, several rows the GEMM path: same text.
  expect_batch_equals_alone(*m, 4, 12, ggml_type::f16, 64, "q8_0/f16");
}

TEST(batch, passes_split_by_max_rows_mix_prefill_chunks_and_decode_tokens) {
  synth_config c;
  const synth_model sm = make_synth(c);
  auto m = load_synth(sm, "batch_split");
  // max_rows 5 < the prompts: every prompt is split across passes, and later
  // passes carry the short prompts' decode tokens next to the long ones' chunks.
  expect_batch_equals_alone(*m, 4, 3, ggml_type::f32, 5, "max_rows 5");

  // A long prompt in mode all next to decode entries: every row's logits.
  const auto long_prompt = some_tokens(23, sm.n_vocab, 5);
  context alone(*m, {.n_ctx = 64, .kv_type = ggml_type::f32});
  alone.eval(long_prompt, logits_mode::all);
  context a(*m, {.n_ctx = 64, .kv_type = ggml_type::f32}), b(*m, {.n_ctx = 64, .kv_type = ggml_type::f32});
  const auto pb = some_tokens(7, sm.n_vocab, 6);
  b.eval(pb, logits_mode::last);
  const int32_t tb[1] = {b.argmax(0)};
  context b_alone(*m, {.n_ctx = 64, .kv_type = ggml_type::f32});
  b_alone.eval(pb, logits_mode::last);
  b_alone.eval(tb, logits_mode::last);
  batch bt(*m, 6);
  batch_entry es[2] = {entry(&a, long_prompt, logits_mode::all), entry(&b, tb)};
  bt.eval(es, output_kind::logits);
  EXPECT_GE(bt.n_passes(), 4u);
  ASSERT_EQ(a.n_logits_rows(), 23);
  for (int64_t i = 0; i < 23; ++i) EXPECT_LT(rel_diff(a.logits(i), alone.logits(i)), k_tol) << "row " << i;
  EXPECT_LT(rel_diff(b.logits(0), b_alone.logits(0)), k_tol);
}

TEST(batch, argmax_outputs_match_the_logits) {
  synth_config c;
  c.arch = "starcoder2";
  const synth_model sm = make_synth(c);
  auto m = load_synth(sm, "batch_argmax");
  const auto prompts = prompts_of(3, sm.n_vocab);
  std::vector<std::unique_ptr<context>> ctxs;
  std::vector<batch_entry> es;
  for (const auto& p : prompts) {
    ctxs.push_back(std::make_unique<context>(*m, infer::context_options{.n_ctx = 64, .kv_type = ggml_type::f32}));
    es.push_back(entry(ctxs.back().get(), p, logits_mode::all));
  }
  batch bt(*m);
  bt.eval(es, output_kind::argmax);
  for (size_t i = 0; i < prompts.size(); ++i) {
    context alone(*m, {.n_ctx = 64, .kv_type = ggml_type::f32});
    alone.eval(prompts[i], logits_mode::all);
    ASSERT_EQ(ctxs[i]->n_logits_rows(), static_cast<int64_t>(prompts[i].size()));
    EXPECT_TRUE(ctxs[i]->logits(0).empty());  // only argmaxes came back
    for (int64_t r = 0; r < ctxs[i]->n_logits_rows(); ++r) {
      EXPECT_EQ(ctxs[i]->argmax(r), alone.argmax(r)) << "sequence " << i << " row " << r;
      EXPECT_NEAR(ctxs[i]->argmax_logprob(r), alone.argmax_logprob(r), 1e-4);
    }
  }
}

TEST(batch, a_cancelled_sequence_leaves_and_the_others_are_unchanged) {
  synth_config c;
  const synth_model sm = make_synth(c);
  auto m = load_synth(sm, "batch_cancel");
  const auto prompts = prompts_of(3, sm.n_vocab);
  std::vector<solo_run> alone;
  for (const auto& p : prompts) alone.push_back(run_alone(*m, p, 0, ggml_type::f32));

  // Sequence 1 is cancelled by sequence 0's progress after the first pass.
  cancel_source src;
  int progress_calls = 0;
  infer::context_options o0{.n_ctx = 64, .kv_type = ggml_type::f32};
  o0.on_ubatch = [&](int64_t, int64_t) {
    if (++progress_calls == 1) src.cancel(cancel_reason::content_modified);
  };
  context c0(*m, o0), c1(*m, {.n_ctx = 64, .kv_type = ggml_type::f32}), c2(*m, {.n_ctx = 64, .kv_type = ggml_type::f32});
  batch bt(*m, 6);
  batch_entry es[3] = {entry(&c0, prompts[0]), entry(&c1, prompts[1], logits_mode::last, src.token()),
                       entry(&c2, prompts[2])};
  bt.eval(es, output_kind::logits);
  EXPECT_TRUE(es[1].result.cancelled);
  EXPECT_LT(es[1].result.n_evaluated, static_cast<int64_t>(prompts[1].size()));
  EXPECT_EQ(c1.n_past(), es[1].result.n_evaluated);  // only whole committed chunks
  EXPECT_EQ(c1.n_logits_rows(), 0);
  for (int i : {0, 2}) {
    const context& ci = i == 0 ? c0 : c2;
    EXPECT_FALSE(es[i].result.cancelled);
    EXPECT_EQ(ci.tokens(), prompts[static_cast<size_t>(i)]);
    EXPECT_LT(rel_diff(ci.logits(0), alone[static_cast<size_t>(i)].logits[0]), k_tol) << "sequence " << i;
  }
  // The cancelled sequence resumes later from what it committed and ends as alone.
  const auto rest = std::span<const int32_t>(prompts[1]).subspan(static_cast<size_t>(c1.n_past()));
  batch_entry again[1] = {entry(&c1, rest)};
  bt.eval(again, output_kind::logits);
  EXPECT_EQ(c1.tokens(), prompts[1]);
  EXPECT_LT(rel_diff(c1.logits(0), alone[1].logits[0]), k_tol);

  // The batch's own token stops everything and commits nothing of that pass.
  cancel_source all;
  all.cancel(cancel_reason::cancelled);
  context d(*m, {.n_ctx = 64, .kv_type = ggml_type::f32});
  batch_entry one[1] = {entry(&d, prompts[0])};
  bt.eval(one, output_kind::logits, all.token());
  EXPECT_TRUE(one[0].result.cancelled);
  EXPECT_EQ(d.n_past(), 0);
}

TEST(batch, bad_entries_are_refused_before_any_work) {
  synth_config c;
  const synth_model sm = make_synth(c);
  auto m = load_synth(sm, "batch_bad");
  context a(*m, {.n_ctx = 16, .kv_type = ggml_type::f32}), b(*m, {.n_ctx = 16, .kv_type = ggml_type::f32});
  const auto p = some_tokens(4, sm.n_vocab, 1);
  batch bt(*m);
  batch_entry twice[2] = {entry(&a, p), entry(&a, p)};
  EXPECT_THROW(bt.eval(twice, output_kind::logits), infer::model_error);
  const std::vector<int32_t> bad = {1, static_cast<int32_t>(sm.n_vocab)};
  batch_entry out_of_range[2] = {entry(&a, p), entry(&b, bad)};
  EXPECT_THROW(bt.eval(out_of_range, output_kind::logits), infer::model_error);
  const auto too_long = some_tokens(17, sm.n_vocab, 2);
  batch_entry full[2] = {entry(&a, p), entry(&b, too_long)};
  EXPECT_THROW(bt.eval(full, output_kind::logits), infer::model_error);
  context f16(*m, {.n_ctx = 16, .kv_type = ggml_type::f16});
  batch_entry mixed[2] = {entry(&a, p), entry(&f16, p)};
  EXPECT_THROW(bt.eval(mixed, output_kind::logits), infer::model_error);
  EXPECT_EQ(a.n_past(), 0);
  EXPECT_EQ(b.n_past(), 0);
  EXPECT_THROW(batch(*m, 0), infer::model_error);
}

TEST(batch, copy_prefix_forks_a_sequence_without_recomputing_it) {
  synth_config c;
  const synth_model sm = make_synth(c);
  auto m = load_synth(sm, "batch_fork");
  const auto prompt = some_tokens(20, sm.n_vocab, 9);
  context a(*m, {.n_ctx = 64, .kv_type = ggml_type::f16});
  a.eval(prompt, logits_mode::last);
  // b already holds the first 6 tokens and then something else.
  context b(*m, {.n_ctx = 64, .kv_type = ggml_type::f16});
  std::vector<int32_t> other(prompt.begin(), prompt.begin() + 6);
  other.push_back(prompt[6] == 1 ? 2 : 1);
  b.eval(other, logits_mode::none);
  b.copy_prefix(a, 20);
  EXPECT_EQ(b.tokens(), prompt);
  const int32_t next[1] = {a.argmax(0)};
  a.eval(next, logits_mode::last);
  b.eval(next, logits_mode::last);
  EXPECT_EQ(copy(a.logits(0)), copy(b.logits(0)));  // the same cells, bit for bit
  // A shorter prefix drops the rest; errors leave the context as it was.
  b.copy_prefix(a, 4);
  EXPECT_EQ(b.tokens(), std::vector<int32_t>(prompt.begin(), prompt.begin() + 4));
  EXPECT_THROW(b.copy_prefix(a, 99), infer::model_error);
  context f32(*m, {.n_ctx = 64, .kv_type = ggml_type::f32});
  EXPECT_THROW(f32.copy_prefix(a, 4), infer::model_error);
  EXPECT_EQ(b.n_past(), 4);
}

}  // namespace
}  // namespace qf::test
