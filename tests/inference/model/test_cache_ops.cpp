// KV cache operations prefix reuse relies on: keep_first + re-eval equals a
// fresh eval; move_range equals evaluating the moved tokens at their new
// positions; cancellation (by a source or the token's deadline) keeps whole
// ubatches only.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "inference/model/context.h"
#include "tests/inference/model/model_test_util.h"

namespace qf::test {
namespace {

using infer::context;
using infer::ggml_type;
using infer::logits_mode;

synth_config cfg_for(const std::string& arch) {
  synth_config c;
  c.arch = arch;
  c.tied = arch == "qwen2";
  if (arch == "qwen2") c.rope_base = 1000000.0f;
  return c;
}

std::vector<int32_t> cat(std::vector<int32_t> a, const std::vector<int32_t>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

class cache_ops : public ::testing::TestWithParam<std::string> {};

TEST_P(cache_ops, keep_first_then_reeval_equals_fresh) {
  const synth_model sm = make_synth(cfg_for(GetParam()));
  auto m = load_synth(sm, GetParam() + "_keep");
  const auto a = some_tokens(10, sm.n_vocab, 1), b = some_tokens(7, sm.n_vocab, 2), c = some_tokens(6, sm.n_vocab, 3);
  context ctx(*m, {.n_ctx = 64, .n_ubatch = 4});
  ctx.eval(cat(a, b), logits_mode::none);
  ctx.keep_first(10);
  EXPECT_EQ(ctx.tokens(), a);
  ctx.eval(c, logits_mode::all);
  context fresh(*m, {.n_ctx = 64, .n_ubatch = 4});
  fresh.eval(cat(a, c), logits_mode::all);
  EXPECT_EQ(ctx.tokens(), fresh.tokens());
  for (int64_t i = 0; i < 6; ++i) EXPECT_LT(rel_diff(ctx.logits(i), fresh.logits(10 + i)), 1e-5) << i;
  ctx.keep_first(100);  // beyond the end: no-op
  EXPECT_EQ(ctx.n_past(), 16);
  ctx.clear();
  EXPECT_EQ(ctx.n_past(), 0);
  EXPECT_THROW(ctx.keep_first(-1), std::out_of_range);
}

// Moving [src_begin, src_end) back to dst_begin re-rotates the cached keys to
// their new positions. In a one-layer model K and V of a token depend only on
// the token and its position, so the moved cache must equal a fresh eval of
// the kept tokens: the next tokens' logits agree. (With more layers the moved
// chunk keeps the attention context it was computed with: reuse is then an
// approximation, as llama.cpp's context shift.)
void check_move(const std::string& arch, ggml_type kv, double tol) {
  synth_config c = cfg_for(arch);
  c.n_layer = 1;
  const synth_model sm = make_synth(c);
  auto m = load_synth(sm, arch + "_move");
  const auto p = some_tokens(8, sm.n_vocab, 4);   // kept prefix
  const auto x = some_tokens(5, sm.n_vocab, 5);   // edited away
  const auto s = some_tokens(9, sm.n_vocab, 6);   // chunk moved back
  const auto y = some_tokens(3, sm.n_vocab, 7);   // dropped tail
  const auto t = some_tokens(4, sm.n_vocab, 8);   // evaluated after the move
  context ctx(*m, {.n_ctx = 64, .kv_type = kv});
  ctx.eval(cat(cat(cat(p, x), s), y), logits_mode::none);
  ctx.move_range(13, 22, 8);
  EXPECT_EQ(ctx.tokens(), cat(p, s));
  ctx.eval(t, logits_mode::all);
  context fresh(*m, {.n_ctx = 64, .kv_type = kv});
  fresh.eval(cat(cat(p, s), t), logits_mode::all);
  for (int64_t i = 0; i < 4; ++i) EXPECT_LT(rel_diff(ctx.logits(i), fresh.logits(17 + i)), tol) << arch << " " << i;
}

TEST_P(cache_ops, move_range_equals_eval_at_new_positions_f32) { check_move(GetParam(), ggml_type::f32, 1e-4); }
TEST_P(cache_ops, move_range_equals_eval_at_new_positions_f16) { check_move(GetParam(), ggml_type::f16, 5e-3); }

TEST_P(cache_ops, move_range_edge_cases) {
  const synth_model sm = make_synth(cfg_for(GetParam()));
  auto m = load_synth(sm, GetParam() + "_move_edges");
  const auto toks = some_tokens(12, sm.n_vocab, 9);
  context ctx(*m, {.n_ctx = 32});
  ctx.eval(toks, logits_mode::none);
  EXPECT_THROW(ctx.move_range(4, 13, 0), std::out_of_range);  // past the end
  EXPECT_THROW(ctx.move_range(4, 8, 5), std::out_of_range);   // forward move
  EXPECT_THROW(ctx.move_range(6, 5, 0), std::out_of_range);
  ctx.move_range(4, 10, 4);  // no shift: keeps [0, 10)
  EXPECT_EQ(ctx.n_past(), 10);
  ctx.move_range(10, 10, 3);  // empty range: keeps [0, 3)
  EXPECT_EQ(ctx.tokens(), std::vector<int32_t>(toks.begin(), toks.begin() + 3));
}

TEST_P(cache_ops, cancel_between_ubatches_keeps_whole_ubatches) {
  const synth_model sm = make_synth(cfg_for(GetParam()));
  auto m = load_synth(sm, GetParam() + "_cancel");
  const auto toks = some_tokens(40, sm.n_vocab, 10);
  cancel_source src;
  context ctx(*m, {.n_ctx = 64, .n_ubatch = 8, .on_ubatch = [&](int64_t done, int64_t) {
                     if (done >= 16) src.cancel(cancel_reason::content_modified);
                   }});
  auto r = ctx.eval(toks, logits_mode::all, src.token());
  EXPECT_TRUE(r.cancelled);
  EXPECT_EQ(r.n_evaluated, 16);
  EXPECT_EQ(ctx.n_past(), 16);
  EXPECT_EQ(ctx.n_logits_rows(), 16);
  // Already cancelled: nothing runs.
  auto r2 = ctx.eval(toks, logits_mode::last, src.token());
  EXPECT_TRUE(r2.cancelled);
  EXPECT_EQ(r2.n_evaluated, 0);
  EXPECT_EQ(ctx.n_past(), 16);
  // The rest, uncancelled, gives what one uninterrupted eval gives.
  ctx.eval(std::span(toks).subspan(16), logits_mode::last);
  context fresh(*m, {.n_ctx = 64, .n_ubatch = 8});
  fresh.eval(toks, logits_mode::last);
  EXPECT_LT(rel_diff(ctx.logits(), fresh.logits()), 1e-5);
}

// A deadline carried by the token stops the eval at the next check, as a
// cancel does, with no thread setting anything: here the first two ubatches
// run, the progress callback waits until the deadline has passed, and the
// eval stops before the third. A token past its deadline runs nothing.
TEST_P(cache_ops, deadline_on_the_token_stops_the_eval_with_no_other_thread) {
  const synth_model sm = make_synth(cfg_for(GetParam()));
  auto m = load_synth(sm, GetParam() + "_deadline");
  const auto toks = some_tokens(40, sm.n_vocab, 10);
  const auto deadline = cancel_token::clock::now() + std::chrono::milliseconds(250);
  const cancel_token tok = cancel_token().with_deadline(deadline);
  context ctx(*m, {.n_ctx = 64, .n_ubatch = 8, .on_ubatch = [&](int64_t done, int64_t) {
                     if (done >= 16) std::this_thread::sleep_until(deadline + std::chrono::milliseconds(1));
                   }});
  auto r = ctx.eval(toks, logits_mode::all, tok);
  EXPECT_TRUE(r.cancelled);
  EXPECT_EQ(r.n_evaluated, 16);
  EXPECT_EQ(ctx.n_past(), 16);
  EXPECT_EQ(tok.reason(), cancel_reason::deadline);
  auto r2 = ctx.eval(toks, logits_mode::last, tok);
  EXPECT_TRUE(r2.cancelled);
  EXPECT_EQ(r2.n_evaluated, 0);
  EXPECT_EQ(ctx.n_past(), 16);
  // The rest, with a deadline far ahead, gives what one uninterrupted eval gives.
  const cancel_token later = cancel_token().with_deadline(cancel_token::clock::now() + std::chrono::hours(1));
  auto r3 = ctx.eval(std::span(toks).subspan(16), logits_mode::last, later);
  EXPECT_FALSE(r3.cancelled);
  context fresh(*m, {.n_ctx = 64, .n_ubatch = 8});
  fresh.eval(toks, logits_mode::last);
  EXPECT_LT(rel_diff(ctx.logits(), fresh.logits()), 1e-5);
}

// Cancelling from another thread at an arbitrary moment (possibly between
// layers inside a ubatch): whatever the timing, only whole ubatches are
// committed and the cache stays consistent.
TEST_P(cache_ops, cancel_at_any_moment_drops_partial_ubatch) {
  synth_config c = cfg_for(GetParam());
  c.n_layer = 4;
  const synth_model sm = make_synth(c);
  auto m = load_synth(sm, GetParam() + "_cancel_race");
  const auto toks = some_tokens(96, sm.n_vocab, 12);
  context fresh(*m, {.n_ctx = 128, .n_ubatch = 16});
  fresh.eval(toks, logits_mode::last);
  for (int delay_us : {0, 50, 200, 800, 3000}) {
    context ctx(*m, {.n_ctx = 128, .n_ubatch = 16});
    cancel_source src;
    std::thread killer([&] {
      std::this_thread::sleep_for(std::chrono::microseconds(delay_us));
      src.cancel(cancel_reason::cancelled);
    });
    auto r = ctx.eval(toks, logits_mode::last, src.token());
    killer.join();
    EXPECT_EQ(r.n_evaluated % 16 == 0 || r.n_evaluated == 96, true) << r.n_evaluated;
    EXPECT_EQ(ctx.n_past(), r.n_evaluated);
    EXPECT_EQ(r.cancelled, r.n_evaluated < 96);
    if (r.n_evaluated < 96) ctx.eval(std::span(toks).subspan(r.n_evaluated), logits_mode::last);
    EXPECT_LT(rel_diff(ctx.logits(), fresh.logits()), 1e-5) << "delay " << delay_us;
  }
}

INSTANTIATE_TEST_SUITE_P(archs, cache_ops, ::testing::Values("llama", "qwen2"));

}  // namespace
}  // namespace qf::test
