// Several candidates from one prompt, and the confidence gate, on the
// scripted model with hand-made distributions: the prompt is evaluated once
// for all candidates, sampling is deterministic given the seed, duplicates
// are dropped, items come best score first with the scores the distributions
// give, and the gate drops or keeps a suggestion by its threshold.
#include <gtest/gtest.h>

#include <cmath>
#include <set>

#include "server/completion/pipeline/pipeline.h"
#include "tests/server/completion/fake_lm.h"

using namespace qf::server;
using namespace qf::server::completion;
using qf::test::fake_backend;
using qf::test::fake_vocab;

namespace {

const std::string k_uri = "file:///w/src/main.py";

std::string source() {
  std::string s = "import os\n\n";
  for (int i = 0; i < 4; ++i)
    s += "def f" + std::to_string(i) + "(self, x):\n    return self.g(x) + " + std::to_string(i) + "\n\n";
  s += "def main():\n    total = 0\n    \n    print(total)\n";
  return s;
}
constexpr int64_t k_line = 16;  // the empty indented line in main()

completion_request request(bool explicit_trigger) {
  completion_request r;
  r.uri = k_uri;
  r.text = source();
  r.cursor = {k_line, 4};
  r.explicit_trigger = explicit_trigger;
  r.received = clock::now();
  return r;
}

// After a letter w/x/y/z: end of the middle (EOS, all else 30 below). Else a
// choice among w, x, y, z with logits ln(weights), all else 30 below.
qf::test::logits_rule letters(std::array<float, 4> weights) {
  return [weights](std::span<const int32_t> h) {
    std::vector<float> l(fake_vocab::k_n_vocab, -30.0f);
    const int32_t last = h.empty() ? -1 : h.back();
    if (last >= 'w' && last <= 'z') {
      l[fake_vocab::k_eos] = 0.0f;
    } else {
      for (int i = 0; i < 4; ++i) l['w' + i] = std::log(weights[i]);
    }
    return l;
  };
}

// The exact mean log-probability of "letter, then EOS" under letters().
double expected_score(std::array<float, 4> w, int i) {
  const double others = (fake_vocab::k_n_vocab - 4) * std::exp(-30.0 - std::log(double(*std::max_element(w.begin(), w.end()))));
  double sum = 0;
  for (float x : w) sum += x;
  const double max_w = *std::max_element(w.begin(), w.end());
  const double lp_letter = std::log(w[i] / max_w) - std::log(sum / max_w + others);
  const double lp_eos = -std::log(1.0 + (fake_vocab::k_n_vocab - 1) * std::exp(-30.0));
  return (lp_letter + lp_eos) / 2;
}

struct fixture {
  std::shared_ptr<qf::test::fake_stats> stats;
  std::unique_ptr<pipeline> p;
  fixture(completion_settings s, qf::test::logits_rule dist) {
    auto b = std::make_unique<fake_backend>();
    b->distribution = std::move(dist);
    stats = b->stats;
    s.type_through = false;
    s.speculative = false;
    p = std::make_unique<pipeline>(std::move(b), s);
  }
};

completion_settings sampling(int n, double temperature, int seed = 0) {
  completion_settings s;
  s.sampling_explicit = sampling_settings{.temperature = temperature, .top_k = 0, .top_p = 1, .min_p = 0,
                                          .candidates = n};
  s.seed = seed;
  return s;
}

std::vector<std::string> texts(const completion_result& r) {
  std::vector<std::string> out;
  for (const auto& c : r.items) out.push_back(c.insert_text);
  return out;
}

}  // namespace

TEST(candidates, three_candidates_share_one_prompt_evaluation) {
  const std::array<float, 4> w{1, 1, 1, 1};
  fixture one(sampling(1, 1.0), letters(w)), three(sampling(3, 1.0), letters(w));
  completion_result r1 = one.p->complete(request(true), {});
  completion_result r3 = three.p->complete(request(true), {});
  ASSERT_EQ(r3.metrics.tokens_reused, 0);
  const int64_t prompt = r3.metrics.tokens_evaluated;
  EXPECT_GT(prompt, 50);
  EXPECT_EQ(r1.metrics.tokens_evaluated, prompt);
  EXPECT_EQ(r3.metrics.candidates, 3);
  EXPECT_EQ(r3.metrics.tokens_generated, 6);  // a letter and EOS each
  // The engine evaluated the prompt once, then each candidate's letter (its EOS ends it unevaluated).
  EXPECT_EQ(three.stats->evaluated, prompt + 3);
  EXPECT_EQ(one.stats->evaluated, prompt + 1);
}

TEST(candidates, sampling_is_deterministic_given_the_seed) {
  const std::array<float, 4> w{1, 1, 1, 1};
  fixture a(sampling(3, 1.0, 7), letters(w)), b(sampling(3, 1.0, 7), letters(w));
  EXPECT_EQ(texts(a.p->complete(request(true), {})), texts(b.p->complete(request(true), {})));
  std::set<std::vector<std::string>> seen;
  for (int seed = 0; seed < 12; ++seed) {
    fixture f(sampling(3, 1.0, seed), letters(w));
    seen.insert(texts(f.p->complete(request(true), {})));
  }
  EXPECT_GT(seen.size(), 1u) << "different seeds draw different candidates";
}

TEST(candidates, duplicates_are_dropped) {
  // One token far above the rest: every sample is the greedy token.
  fixture f(sampling(3, 0.7), {});
  completion_result r = f.p->complete(request(true), {});
  ASSERT_EQ(r.items.size(), 1u);
  EXPECT_EQ(r.metrics.candidates, 3);
  EXPECT_EQ(r.metrics.duplicates, 2);
}

TEST(candidates, greedy_class_decodes_one_candidate) {
  fixture f(sampling(3, 0.0), letters({1, 1, 1, 1}));
  completion_result r = f.p->complete(request(true), {});
  ASSERT_EQ(r.items.size(), 1u);
  EXPECT_EQ(r.metrics.candidates, 1);
  EXPECT_EQ(r.items[0].insert_text, "w");  // the lowest id on ties
}

TEST(candidates, items_come_best_score_first_with_their_log_probabilities) {
  const std::array<float, 4> w{4, 2, 1, 1};  // p = 1/2, 1/4, 1/8, 1/8
  fixture f(sampling(6, 1.0, 3), letters(w));
  completion_result r = f.p->complete(request(true), {});
  ASSERT_GE(r.items.size(), 2u);
  EXPECT_EQ(r.items[0].insert_text, "w");  // the greedy candidate, the most likely
  for (size_t i = 0; i < r.items.size(); ++i) {
    const auto& c = r.items[i];
    ASSERT_TRUE(c.score.has_value());
    const int letter = c.insert_text.back() - 'w';
    EXPECT_NEAR(*c.score, expected_score(w, letter), 1e-5) << c.insert_text;
    if (i > 0) {
      EXPECT_LE(*c.score, *r.items[i - 1].score);
    }
  }
  EXPECT_NEAR(*r.metrics.score, std::log(0.5) / 2, 1e-5);
}

TEST(candidates, confidence_gate_drops_and_keeps_by_threshold) {
  const std::array<float, 4> w{4, 2, 1, 1};
  const double score = std::log(0.5) / 2;  // greedy "w" then EOS: (ln 1/2 + ln 1) / 2
  completion_settings s;
  s.sampling_auto.min_confidence = score + 0.01;
  fixture gated(s, letters(w));
  completion_result r = gated.p->complete(request(false), {});
  EXPECT_TRUE(r.items.empty());
  EXPECT_EQ(r.metrics.gated, 1);
  ASSERT_TRUE(r.metrics.score.has_value());
  EXPECT_NEAR(*r.metrics.score, score, 1e-5);

  s.sampling_auto.min_confidence = score - 0.01;
  fixture kept(s, letters(w));
  r = kept.p->complete(request(false), {});
  ASSERT_EQ(r.items.size(), 1u);
  EXPECT_EQ(r.metrics.gated, 0);
  EXPECT_NEAR(*r.items[0].score, score, 1e-5);
}
