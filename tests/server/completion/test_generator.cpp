// Budgeted generation on the scripted model: speculative output equals greedy
// output, stop tokens never leak, cancellation keeps the evaluated prefix,
// the prompt deadline cuts the prompt phase.
#include <gtest/gtest.h>

#include "server/completion/generator.h"
#include "tests/server/completion/fake_lm.h"

using namespace qf::server::completion;
using qf::test::fake_backend;
using qf::test::fake_vocab;

namespace {

struct harness {
  fake_backend be;
  fim_format fmt;
  deadline_watch watch;
  cursor_context cx;
  trigger_decision dec;
  harness() : fmt(detect_fim_format(be.vocab())) {
    cx = make_cursor_context("", 0, 0);
    dec.multi_line = true;
  }
  gen_outcome run(std::span<const int32_t> prompt, gen_params p, bool rules = false, const qf::cancel_token& c = {}) {
    auto seq = be.new_sequence(4096);
    stop_checker sc(cx, dec, rules);
    p.stop_rules = rules;
    return generate(*seq, be.vocab(), fmt, prompt, sc, p, c, watch);
  }
};

std::vector<int32_t> code_prompt(const fake_vocab& v) {
  std::string src;
  for (int i = 0; i < 6; ++i) src += "for i in range(n):\n    total += values[i] * weight\n";
  src += "for i in range(n):\n    total";
  std::vector<int32_t> t{fake_vocab::k_bos};
  auto e = v.encode(src);
  t.insert(t.end(), e.begin(), e.end());
  return t;
}

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
  deadline_watch w;
  cursor_context cx = make_cursor_context("", 0, 0);
  trigger_decision d;
  d.multi_line = true;
  std::vector<int32_t> prompt{fake_vocab::k_pre, 'x', fake_vocab::k_suf, fake_vocab::k_mid};
  gen_params p;
  p.max_tokens = 5;
  {
    auto seq = be.new_sequence(256);
    stop_checker sc(cx, d, true);
    gen_outcome o = generate(*seq, be.vocab(), fmt, prompt, sc, p, {}, w);
    EXPECT_EQ(o.text, "ab");
    EXPECT_EQ(o.generated.size(), 3u);
  }
  {
    // Stop rules off (fixed length): generation runs on, specials still never printed.
    auto seq = be.new_sequence(256);
    stop_checker sc(cx, d, false);
    p.stop_rules = false;
    gen_outcome o = generate(*seq, be.vocab(), fmt, prompt, sc, p, {}, w);
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
  gen_outcome o = generate(*seq, be.vocab(), h.fmt, prompt, sc, p, src.token(), h.watch);
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
  gen_outcome o = generate(*seq, h.be.vocab(), h.fmt, prompt, sc, p, {}, h.watch);
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

// The scope's token sees the parent's cancellation at once (no watcher thread
// in between: on a machine whose cores are all busy it may not run for a while).
TEST(deadline_watch, parent_cancellation_is_visible_without_the_watcher) {
  deadline_watch w;
  qf::cancel_source parent;
  deadline_watch::scope s(w, parent.token(), gen_clock::time_point::max());
  const qf::cancel_token t = s.token();
  EXPECT_FALSE(t.is_cancelled());
  parent.cancel(qf::cancel_reason::content_modified);
  EXPECT_TRUE(t.is_cancelled());
  EXPECT_EQ(t.reason(), qf::cancel_reason::content_modified);
  EXPECT_FALSE(s.deadline_hit());
}

TEST(cancel_token, linked_token_follows_either_source_and_keeps_its_own_reason_first) {
  qf::cancel_source own, parent;
  const qf::cancel_token t = own.token().linked_to(parent.token());
  EXPECT_FALSE(t.is_cancelled());
  EXPECT_EQ(t.reason(), qf::cancel_reason::none);
  own.cancel(qf::cancel_reason::deadline);
  parent.cancel(qf::cancel_reason::cancelled);
  EXPECT_EQ(t.reason(), qf::cancel_reason::deadline);
  qf::cancel_source own2;
  const qf::cancel_token u = own2.token().linked_to(parent.token());
  EXPECT_TRUE(u.is_cancelled());
  EXPECT_EQ(u.reason(), qf::cancel_reason::cancelled);
  EXPECT_FALSE(qf::cancel_token().linked_to(qf::cancel_token()).is_cancelled());
}

TEST(deadline_watch, every_scope_is_watched_even_when_armed_back_to_back) {
  deadline_watch w;
  for (int i = 0; i < 50; ++i) {
    qf::cancel_source parent;
    deadline_watch::scope s(w, parent.token(), gen_clock::time_point::max());
    parent.cancel(qf::cancel_reason::content_modified);
    // The linked token follows the parent (no bound on how soon: poll up to 10 s).
    for (int k = 0; k < 10000 && !s.token().is_cancelled(); ++k) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    ASSERT_TRUE(s.token().is_cancelled()) << "scope " << i;
    EXPECT_EQ(s.token().reason(), qf::cancel_reason::content_modified);
  }
  for (int i = 0; i < 20; ++i) {
    deadline_watch::scope s(w, {}, gen_clock::now() + std::chrono::milliseconds(1));
    for (int k = 0; k < 10000 && !s.token().is_cancelled(); ++k) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    ASSERT_TRUE(s.deadline_hit()) << "scope " << i;
  }
}
