// Draft-model speculation on the scripted model: whatever the draft model
// proposes, the output is the target's greedy output token for token; a
// draft model that agrees saves target steps; the drafter keeps its cache
// across proposals, falls back to prompt lookup when far behind, and refuses
// a model with another tokenizer.
#include <gtest/gtest.h>

#include "server/completion/decode/draft_model.h"
#include "server/completion/decode/generator.h"
#include "tests/server/completion/generator_harness.h"

using namespace qf::server::completion;
using qf::test::copy_rule;
using qf::test::fake_backend;
using qf::test::fake_vocab;

namespace {

using harness = qf::test::generator_harness;
using qf::test::code_prompt;

// A draft model that agrees with the copy model on every other position.
int32_t half_right_rule(std::span<const int32_t> h) {
  const int32_t t = copy_rule(h);
  return h.size() % 2 ? t : 'a' + (t + 1) % 26;
}
// One that never agrees.
int32_t wrong_rule(std::span<const int32_t> h) { return 'A' + static_cast<int32_t>(copy_rule(h) % 26); }

model_drafter make_drafter(qf::test::next_rule rule, double min_prob = 0) {
  return model_drafter(std::make_unique<fake_backend>(std::move(rule)), 4096, 3, min_prob);
}

}  // namespace

TEST(draft_model, output_equals_greedy_whatever_the_draft_model_proposes) {
  for (auto rule : {qf::test::next_rule(copy_rule), qf::test::next_rule(half_right_rule),
                    qf::test::next_rule(wrong_rule)}) {
    for (int draft_max : {1, 4, 8}) {
      harness h;
      const auto prompt = code_prompt(h.be.vocab());
      gen_params p;
      p.max_tokens = 60;
      const gen_outcome greedy = h.run(prompt, p);
      model_drafter d = make_drafter(rule);
      ASSERT_TRUE(d.warm(prompt, 64, {}));  // as the pipeline's background task does
      p.speculative = true;
      p.draft_max = draft_max;
      p.draft = &d;
      const gen_outcome spec = h.run(prompt, p);
      EXPECT_EQ(spec.generated, greedy.generated) << "draft_max " << draft_max;
      EXPECT_EQ(spec.text, greedy.text);
      EXPECT_EQ(greedy.generated.size(), 60u);
      EXPECT_GT(d.stats().model_drafts, 0);
      EXPECT_LE(spec.accepted, spec.drafted);
    }
  }
}

TEST(draft_model, an_agreeing_draft_model_saves_target_steps_and_a_wrong_one_is_all_rejected) {
  harness h;
  const auto prompt = code_prompt(h.be.vocab());
  gen_params p;
  p.max_tokens = 48;
  p.speculative = true;
  p.draft_max = 8;

  model_drafter same = make_drafter(copy_rule);
  ASSERT_TRUE(same.warm(prompt, 64, {}));
  p.draft = &same;
  const int64_t calls0 = h.be.stats->eval_calls;
  const gen_outcome agree = h.run(prompt, p);
  const int64_t agree_calls = h.be.stats->eval_calls - calls0;
  EXPECT_EQ(agree.accepted, agree.drafted);  // the same rule: every drafted token is the target's
  EXPECT_GT(agree.accepted, 30);
  EXPECT_LT(agree_calls, 12);  // 48 tokens in drafts of 8 plus the prompt, not 48 steps

  model_drafter wrong = make_drafter(wrong_rule);
  ASSERT_TRUE(wrong.warm(prompt, 64, {}));
  p.draft = &wrong;
  const gen_outcome rejected = h.run(prompt, p);
  EXPECT_EQ(rejected.accepted, 0);
  EXPECT_GT(rejected.drafted, 0);
  EXPECT_EQ(rejected.generated, agree.generated);
}

TEST(draft_model, a_proposal_reuses_the_cached_history) {
  auto backend = std::make_unique<fake_backend>(copy_rule);
  auto stats = backend->stats;
  model_drafter d(std::move(backend), 4096, 3, 0);
  const auto history = code_prompt(d.backend().vocab());
  ASSERT_GT(history.size(), 40u);
  // Far behind at first: prompt lookup answers, warm() catches up.
  EXPECT_TRUE(d.behind(history));
  (void)d.propose(history, 4, {});
  EXPECT_EQ(d.stats().cold, 1);
  EXPECT_EQ(stats->evaluated, 0);
  EXPECT_TRUE(d.warm(history, 16, {}));
  EXPECT_FALSE(d.behind(history));
  const int64_t warmed = stats->evaluated;
  EXPECT_EQ(warmed, static_cast<int64_t>(history.size()) - 1);

  // Now a proposal evaluates the last token and its own draft only.
  std::vector<int32_t> draft = d.propose(history, 4, {});
  ASSERT_EQ(draft.size(), 4u);
  EXPECT_EQ(stats->evaluated - warmed, 1 + 3);  // the last history token, then 3 drafted (the 4th needs no row)
  // The history grows by the first two drafted tokens and a correction: only those are evaluated.
  std::vector<int32_t> next = history;
  next.insert(next.end(), draft.begin(), draft.begin() + 2);
  next.push_back('z');
  const int64_t before = stats->evaluated;
  (void)d.propose(next, 1, {});
  EXPECT_EQ(stats->evaluated - before, 1);  // draft[0..1] were cached; only 'z'
}

TEST(draft_model, an_unsure_draft_model_leaves_the_draft_to_prompt_lookup) {
  // The scripted rows give the best token a probability of about 0.98.
  model_drafter sure = make_drafter(copy_rule, 0.5);
  model_drafter unsure = make_drafter(copy_rule, 0.999);
  const auto history = code_prompt(sure.backend().vocab());
  for (model_drafter* d : {&sure, &unsure}) ASSERT_TRUE(d->warm(history, 64, {}));
  EXPECT_EQ(sure.propose(history, 4, {}).size(), 4u);
  EXPECT_EQ(sure.stats().model_drafts, 1);
  (void)unsure.propose(history, 4, {});
  EXPECT_EQ(unsure.stats().model_drafts, 0);
  EXPECT_EQ(unsure.propose(history, 4, {}), prompt_lookup_draft(history, 3, 4));
  EXPECT_EQ(unsure.stats().skipped, 1);
  // It sits out 1, 2, 4, then 8 proposals: of 20 more, 4 ask the model.
  for (int i = 0; i < 20; ++i) (void)unsure.propose(history, 4, {});
  EXPECT_EQ(unsure.stats().proposals - unsure.stats().skipped - unsure.stats().cold, 1 + 4);
  EXPECT_EQ(unsure.stats().model_drafts, 0);
}

TEST(draft_model, a_model_with_another_tokenizer_cannot_draft) {
  fake_backend target, same, other_specials, other_piece;
  EXPECT_EQ(draft_vocab_mismatch(target.vocab(), same.vocab()), "");
  other_piece.mutable_vocab().set_special(fake_vocab::k_pad, "<pad>");
  EXPECT_NE(draft_vocab_mismatch(target.vocab(), other_piece.vocab()).find("token 304"), std::string::npos);
  other_specials.mutable_vocab().mutable_specials().eos = -1;
  EXPECT_NE(draft_vocab_mismatch(target.vocab(), other_specials.vocab()).find("special"), std::string::npos);
}

TEST(draft_model, a_cancelled_proposal_returns_at_once) {
  model_drafter d = make_drafter(copy_rule);
  const auto history = code_prompt(d.backend().vocab());
  ASSERT_TRUE(d.warm(history, 64, {}));
  qf::cancel_source src;
  src.cancel(qf::cancel_reason::content_modified);
  EXPECT_TRUE(d.propose(history, 8, src.token()).empty());
  model_drafter cold = make_drafter(copy_rule);
  EXPECT_FALSE(cold.warm(history, 8, src.token()));
  EXPECT_TRUE(cold.behind(history));
}
