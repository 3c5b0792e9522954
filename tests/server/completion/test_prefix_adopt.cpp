// Prefixes shared across the owners of one step loop (step_loop.h,
// lm_backend::adopt_prefix): a sequence of one owner takes the longest prefix
// of its prompt that another owner's sequence holds, copied and not
// evaluated, and what it then computes equals evaluating the whole prompt
// alone (the tiny trained Llama of the shared test data); nothing is adopted
// that is shorter than what it holds or than asked; a sequence that goes is
// no longer a source, and sequences made, evaluated and destroyed on other
// threads while one adopts over and over leave every adoption whole (the
// sanitizer builds check the locking). The suite is the step loop's, so the
// ThreadSanitizer stage runs them with its other tests.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <string>
#include <thread>
#include <vector>

#include "server/completion/decode/engine_backend.h"
#include "server/completion/decode/step_loop.h"
#include "tests/server/completion/fake_lm.h"
#include "tests/server/completion/stories_engine.h"

using namespace qf::server::completion;
using qf::test::fake_backend;

namespace {

std::vector<int32_t> encoded(const lm_backend& be, const std::string& text) {
  std::vector<int32_t> t = {be.vocab().specials().bos};
  for (int32_t id : be.vocab().encode(text)) t.push_back(id);
  return t;
}

std::vector<int32_t> letters(const std::string& s) { return std::vector<int32_t>(s.begin(), s.end()); }

}  // namespace

TEST(step_loop, adopt_prefix_copies_another_owners_head_which_continues_as_the_whole_prompt_alone) {
  if (qf::test::stories_model().empty()) GTEST_SKIP() << "stories260K not found (set QUICKFILL_TEST_DATA to the shared data)";
  engine_options eo;
  eo.threads = 1;
  eo.device = "cpu";
  std::string err;
  std::shared_ptr<lm_backend> be = load_engine_backend(qf::test::stories_model(), eo, &err);
  ASSERT_TRUE(be) << err;
  const std::string head = "Once upon a time, there was a little girl named Lily. She loved to play outside in the sun";
  const std::vector<int32_t> first = encoded(*be, head + " with her dog Max.");
  const std::vector<int32_t> second = encoded(*be, head + " and pick red flowers for her mom");
  int64_t common = 0;
  while (first[common] == second[common]) ++common;
  ASSERT_GE(common, 16);

  // The second prompt evaluated alone on the engine: the reference.
  auto alone = be->new_sequence(256);
  alone->eval(second, lm_logits::all, {}, lm_output::full);

  step_loop loop(be);
  auto view_a = loop.view(1), view_b = loop.view(2);
  auto a = view_a->new_sequence(256);
  a->eval(first, lm_logits::last, {}, lm_output::best);
  auto b = view_b->new_sequence(256);
  // Asked for more than any sequence holds: nothing.
  EXPECT_EQ(view_b->adopt_prefix(*b, second, common + 1), 0);
  EXPECT_TRUE(b->tokens().empty());
  // Owner 2 takes owner 1's head, then evaluates only what follows it.
  EXPECT_EQ(view_b->adopt_prefix(*b, second, 16), common);
  EXPECT_EQ(b->tokens(), std::vector<int32_t>(second.begin(), second.begin() + common));
  EXPECT_EQ(a->tokens(), first);  // the source is untouched
  const std::vector<int32_t> rest(second.begin() + common, second.end());
  ASSERT_EQ(b->eval(rest, lm_logits::all, {}, lm_output::full).n_evaluated, static_cast<int64_t>(rest.size()));
  for (size_t i = 0; i < rest.size(); ++i) {
    const std::span<const float> got = b->logits(static_cast<int64_t>(i));
    const std::span<const float> want = alone->logits(static_cast<int64_t>(common + i));
    ASSERT_EQ(got.size(), want.size());
    float worst = 0;
    for (size_t k = 0; k < got.size(); ++k) worst = std::max(worst, std::fabs(got[k] - want[k]));
    EXPECT_LT(worst, 1e-4f) << "row " << common + i;
    EXPECT_EQ(b->best_token(static_cast<int64_t>(i)), alone->best_token(static_cast<int64_t>(common + i)));
  }
  // b now holds all of `second`: a cannot give it more; nor b to a (a holds its own prompt).
  EXPECT_EQ(view_b->adopt_prefix(*b, second, 1), 0);
  EXPECT_EQ(view_a->adopt_prefix(*a, first, 1), 0);
  // A third owner with the first prompt takes all of it from a, the longest source.
  auto view_c = loop.view(3);
  auto c = view_c->new_sequence(256);
  EXPECT_EQ(view_c->adopt_prefix(*c, first, 1), static_cast<int64_t>(first.size()));
  EXPECT_EQ(c->tokens(), first);
  // Sources gone, nothing to take.
  a.reset();
  c.reset();
  auto d = view_c->new_sequence(256);
  EXPECT_EQ(view_c->adopt_prefix(*d, first, 1), common);  // only b's head is left
  b.reset();
  d->keep_first(0);
  EXPECT_EQ(view_c->adopt_prefix(*d, first, 1), 0);
}

TEST(step_loop, adopt_prefix_of_an_engine_alone_adopts_nothing) {
  fake_backend be;
  auto a = be.new_sequence(128), b = be.new_sequence(128);
  const std::vector<int32_t> p = letters("def main():\n    return 0\n");
  a->eval(p, lm_logits::last, {}, lm_output::best);
  EXPECT_EQ(be.adopt_prefix(*b, p, 1), 0);
  EXPECT_TRUE(b->tokens().empty());
}

TEST(step_loop, adopt_prefix_while_sequences_go_on_other_threads_leaves_every_adoption_whole) {
  auto fake = std::make_shared<fake_backend>();
  step_loop loop(fake);
  const std::vector<int32_t> prompt = letters("import os\nimport sys\n\ndef main(argv):\n    return len(argv)\n");
  constexpr int k_rounds = 200;
  std::atomic<bool> stop{false};
  std::atomic<int> gone{0};  // sequences the others made, evaluated and destroyed
  // Two owners make a sequence with the prompt, evaluate it and drop it, over and over.
  std::vector<std::thread> churn;
  for (std::uint64_t owner = 1; owner <= 2; ++owner)
    churn.emplace_back([&, owner] {
      auto view = loop.view(owner);
      while (!stop.load()) {
        auto s = view->new_sequence(256);
        s->eval(prompt, lm_logits::last, {}, lm_output::best);
        s.reset();
        gone.fetch_add(1);
      }
    });
  // A fourth owner holds the whole prompt throughout; a third adopts it into
  // a sequence of its own, emptied each round, while the others come and go
  // (some of them, mid-prompt, hold part of it).
  auto keeper = loop.view(4);
  auto kept = keeper->new_sequence(256);
  kept->eval(prompt, lm_logits::last, {}, lm_output::best);
  auto view = loop.view(3);
  auto mine = view->new_sequence(256);
  int rounds = 0;
  for (; rounds < k_rounds || gone.load() < k_rounds; ++rounds) {
    mine->keep_first(0);
    EXPECT_EQ(view->adopt_prefix(*mine, prompt, 8), static_cast<int64_t>(prompt.size()));
    EXPECT_EQ(mine->tokens(), prompt);
  }
  stop = true;
  for (auto& t : churn) t.join();
  EXPECT_EQ(fake->stats->copies, rounds);  // copied each round, never evaluated for it
}
