// Budgeted generation on the scripted model: speculative output equals greedy
// output, stop tokens never leak, cancellation keeps the evaluated prefix,
// the prompt deadline cuts the prompt phase.
#include <gtest/gtest.h>

#include "server/completion/decode/generator.h"
#include "tests/server/completion/generator_harness.h"

using namespace qf::server::completion;
using qf::test::fake_backend;
using qf::test::fake_vocab;

namespace {

using harness = qf::test::generator_harness;
using qf::test::code_prompt;

}  // namespace

TEST(generator, speculative_output_equals_greedy_output) {
  for (int draft_max : {1, 3, 8, 16}) {
    harness h;
    auto prompt = code_prompt(static_cast<const fake_vocab&>(h.be.vocab()));
    gen_params p;
    p.max_tokens = 60;
    gen_outcome greedy = h.run(prompt, p);
    p.speculative = true;
    p.draft_max = draft_max;
    gen_outcome spec = h.run(prompt, p);
    EXPECT_EQ(spec.generated, greedy.generated) << "draft_max " << draft_max;
    EXPECT_EQ(spec.text, greedy.text);
    EXPECT_EQ(greedy.generated.size(), 60u);
    EXPECT_GT(spec.accepted, 0);
    EXPECT_LE(spec.accepted, spec.drafted);
  }
}

TEST(generator, speculation_uses_fewer_eval_calls) {
  harness g, s;
  auto prompt = code_prompt(static_cast<const fake_vocab&>(g.be.vocab()));
  gen_params p;
  p.max_tokens = 48;
  g.run(prompt, p);
  p.speculative = true;
  s.run(prompt, p);
  EXPECT_LT(s.be.stats->eval_calls, g.be.stats->eval_calls);
}

TEST(generator, stop_tokens_end_generation_and_never_leak) {
  // The model says "ab", then FIM-pad, then "cd".
  fake_backend be([](std::span<const int32_t> h) -> int32_t {
    static const int32_t script[] = {'a', 'b', fake_vocab::k_pad, 'c', 'd'};
    int64_t n = 0;
    for (int64_t i = static_cast<int64_t>(h.size()) - 1; i >= 0 && h[i] != fake_vocab::k_mid; --i) ++n;
    return n < 5 ? script[n] : 'z';
  });
  fim_format fmt = detect_fim_format(be.vocab());
  cursor_context cx = make_cursor_context("", 0, 0);
  trigger_decision d;
  d.multi_line = true;
  std::vector<int32_t> prompt{fake_vocab::k_pre, 'x', fake_vocab::k_suf, fake_vocab::k_mid};
  gen_params p;
  p.max_tokens = 5;
  {
    auto seq = be.new_sequence(256);
    stop_checker sc(cx, d, true);
    gen_outcome o = generate(*seq, be.vocab(), fmt, prompt, sc, p, {});
    EXPECT_EQ(o.text, "ab");
    EXPECT_EQ(o.generated.size(), 3u);
  }
  {
    // Stop rules off (fixed length): generation runs on, specials still never printed.
    auto seq = be.new_sequence(256);
    stop_checker sc(cx, d, false);
    p.stop_rules = false;
    gen_outcome o = generate(*seq, be.vocab(), fmt, prompt, sc, p, {});
    EXPECT_EQ(o.text, "abcd");
    EXPECT_EQ(o.generated.size(), 5u);
  }
}

TEST(generator, cancellation_mid_generation_keeps_the_prompt_cached) {
  harness h;
  auto prompt = code_prompt(static_cast<const fake_vocab&>(h.be.vocab()));
  qf::cancel_source src;
  int calls = 0;
  // Cancel from "another thread" once the third decode step starts: emulate by a rule with a side effect.
  fake_backend be([&](std::span<const int32_t> hist) {
    if (hist.size() > prompt.size() + 2 && ++calls == 1) src.cancel(qf::cancel_reason::content_modified);
    return qf::test::copy_rule(hist);
  });
  auto seq = be.new_sequence(4096);
  stop_checker sc(h.cx, h.dec, false);
  gen_params p;
  p.max_tokens = 40;
  gen_outcome o = generate(*seq, be.vocab(), h.fmt, prompt, sc, p, src.token());
  EXPECT_TRUE(o.prompt_done);
  EXPECT_EQ(o.cancelled, qf::cancel_reason::content_modified);
  EXPECT_LT(o.generated.size(), 40u);
  // The whole prompt is still cached: the next request reuses it.
  ASSERT_GE(seq->tokens().size(), prompt.size());
  EXPECT_TRUE(std::equal(prompt.begin(), prompt.end(), seq->tokens().begin()));
}

TEST(generator, cancellation_during_the_prompt_keeps_finished_chunks) {
  harness h;
  h.be.per_token = std::chrono::microseconds(2000);
  h.be.ubatch = 16;
  std::vector<int32_t> prompt(400, 'x');
  auto seq = h.be.new_sequence(4096);
  stop_checker sc(h.cx, h.dec, false);
  gen_params p;
  p.prompt_chunk = 64;
  p.prompt_deadline = gen_clock::now() + std::chrono::milliseconds(100);
  gen_outcome o = generate(*seq, h.be.vocab(), h.fmt, prompt, sc, p, {});
  EXPECT_FALSE(o.prompt_done);
  EXPECT_TRUE(o.deadline_hit);
  EXPECT_EQ(o.cancelled, qf::cancel_reason::none);
  EXPECT_LT(o.evaluated, 400);
  EXPECT_EQ(static_cast<int64_t>(seq->tokens().size()), o.evaluated);  // committed work stays
}

TEST(generator, utf8_is_never_split) {
  utf8_stream u;
  std::string euro = "\xE2\x82\xAC";
  EXPECT_EQ(u.push(euro.substr(0, 1)), "");
  EXPECT_EQ(u.push(euro.substr(1, 1)), "");
  EXPECT_EQ(u.push(euro.substr(2, 1) + "a"), euro + "a");
  EXPECT_EQ(u.push("\xC3"), "");
  EXPECT_EQ(u.flush(), "");  // never completed: dropped, not sent as a stray byte
}

TEST(generator, utf8_output_is_always_well_formed) {
  utf8_stream u;
  // A stray continuation byte and an invalid lead byte, as byte tokens of a
  // poorly trained model can produce, become U+FFFD; valid text passes.
  EXPECT_EQ(u.push("a\x80" "b"), "a\xEF\xBF\xBD" "b");
  EXPECT_EQ(u.push("\xFF"), "\xEF\xBF\xBD");
  EXPECT_EQ(u.push("\xC3\xA9"), "\xC3\xA9");
}

// The prompt deadline reaches the engine on its token: one eval call of the
// whole prompt is stopped part-way by the deadline alone (no thread cancels
// anything), and the ubatches finished before it stay committed.
TEST(generator, the_prompt_deadline_stops_the_engine_inside_an_eval) {
  harness h;
  h.be.per_token = std::chrono::microseconds(1000);
  h.be.ubatch = 16;
  std::vector<int32_t> prompt(400, 'x');
  auto seq = h.be.new_sequence(4096);
  stop_checker sc(h.cx, h.dec, false);
  gen_params p;
  p.prompt_chunk = 400;
  p.prefill_tokens_per_s = 1e9;  // "fast": the whole prompt in one eval call
  p.prompt_deadline = gen_clock::now() + std::chrono::milliseconds(100);
  gen_outcome o = generate(*seq, h.be.vocab(), h.fmt, prompt, sc, p, {});
  EXPECT_FALSE(o.prompt_done);
  EXPECT_TRUE(o.deadline_hit);
  EXPECT_EQ(o.cancelled, qf::cancel_reason::none);
  EXPECT_EQ(h.be.stats->eval_calls, 1);
  EXPECT_EQ(h.be.stats->cancelled_evals, 1);
  EXPECT_LT(o.evaluated, 400);
  EXPECT_EQ(o.evaluated % 16, 0);
  EXPECT_EQ(static_cast<int64_t>(seq->tokens().size()), o.evaluated);
}

// A request cancellation is reported as such even when the deadline has
// passed too (an edit answers -32801, not an incomplete list).
TEST(generator, a_cancel_wins_over_a_passed_deadline) {
  harness h;
  std::vector<int32_t> prompt(40, 'x');
  qf::cancel_source src;
  src.cancel(qf::cancel_reason::content_modified);
  gen_params p;
  p.prompt_deadline = gen_clock::now() - std::chrono::milliseconds(1);
  p.deadline = p.prompt_deadline;
  gen_outcome o = h.run(prompt, p, false, src.token());
  EXPECT_FALSE(o.prompt_done);
  EXPECT_EQ(o.cancelled, qf::cancel_reason::content_modified);
  EXPECT_FALSE(o.deadline_hit);
}

// The deadline is hard: with line rules, the last finish_line of the budget
// only ends the current line (no new one is begun), and without the window
// decoding is cut mid-line in time. The line of 10 tokens ends after ~55 ms
// (5 ms per token).
TEST(generator, the_finish_line_window_ends_the_line_inside_the_budget) {
  auto rule = [](std::span<const int32_t> h) -> int32_t {
    int64_t n = 0;
    for (int64_t i = static_cast<int64_t>(h.size()) - 1; i >= 0 && h[i] != fake_vocab::k_mid; --i) ++n;
    return n < 10 ? 'a' : n == 10 ? '\n' : 'b';
  };
  std::vector<int32_t> prompt{fake_vocab::k_pre, 'x', fake_vocab::k_suf, fake_vocab::k_mid};
  cursor_context cx = make_cursor_context("", 0, 0);
  trigger_decision d;
  d.multi_line = true;
  struct round { int budget_ms, window_ms; bool whole_line; };
  // A long budget whose window opens mid-line: the line is finished, and the next one not begun.
  // A budget that passes mid-line (with or without a window): cut in time, before the line ends.
  for (const round r : {round{5000, 4970, true}, round{30, 0, false}, round{30, 20, false}}) {
    fake_backend be(rule);
    be.per_token = std::chrono::microseconds(5000);
    fim_format fmt = detect_fim_format(be.vocab());
    auto seq = be.new_sequence(256);
    stop_checker sc(cx, d, true);
    gen_params p;
    p.max_tokens = 30;
    p.deadline = gen_clock::now() + std::chrono::milliseconds(r.budget_ms);
    p.finish_line = std::chrono::milliseconds(r.window_ms);
    gen_outcome o = generate(*seq, be.vocab(), fmt, prompt, sc, p, {});
    EXPECT_TRUE(o.deadline_hit) << r.budget_ms;
    EXPECT_EQ(o.cancelled, qf::cancel_reason::none) << r.budget_ms;
    if (r.whole_line) {
      EXPECT_EQ(o.generated.size(), 11u);  // the whole line, then stop at its end
      EXPECT_EQ(o.text, "aaaaaaaaaa");
    } else {
      EXPECT_LT(o.generated.size(), 11u);  // cut mid-line by the deadline
      EXPECT_EQ(o.text, std::string(o.generated.size(), 'a'));
    }
  }
}

// Before the first decode step, the measured step time decides whether one
// fits: a 100 ms step does not fit a 50 ms budget, so the answer is the token
// the prompt evaluation gave; unknown (0), steps are taken until one ends late.
TEST(generator, the_measured_step_time_decides_whether_a_step_is_begun) {
  std::vector<int32_t> prompt{fake_vocab::k_pre, 'x', fake_vocab::k_suf, fake_vocab::k_mid};
  cursor_context cx = make_cursor_context("", 0, 0);
  trigger_decision d;
  // Wide margins: on a loaded machine a 5 ms sleep can take far longer.
  for (const int estimate_ms : {1000, 0}) {
    fake_backend be([](std::span<const int32_t>) -> int32_t { return 'a'; });
    be.per_token = std::chrono::microseconds(5000);
    fim_format fmt = detect_fim_format(be.vocab());
    auto seq = be.new_sequence(256);
    stop_checker sc(cx, d, false);
    gen_params p;
    p.max_tokens = 200;  // more than fit the deadline
    p.stop_rules = false;
    p.deadline = gen_clock::now() + std::chrono::milliseconds(400);
    p.step_estimate = std::chrono::milliseconds(estimate_ms);
    gen_outcome o = generate(*seq, be.vocab(), fmt, prompt, sc, p, {});
    EXPECT_TRUE(o.deadline_hit) << estimate_ms;
    if (estimate_ms > 0) {
      EXPECT_EQ(o.generated.size(), 1u);
      EXPECT_EQ(o.step_ms, 0.0);  // no decode step ran
    } else {
      EXPECT_GT(o.generated.size(), 1u);
      EXPECT_GT(o.step_ms, 0.0);
    }
  }
}
