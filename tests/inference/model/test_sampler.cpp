// Sampler: greedy, determinism per seed, and each filter's effect.
#include <gtest/gtest.h>

#include <cmath>
#include <algorithm>
#include <limits>
#include <map>
#include <set>
#include <vector>

#include "inference/sampling/sampler.h"

namespace qf::infer {
namespace {

std::vector<float> wavy(int n) {
  std::vector<float> l(n);
  for (int i = 0; i < n; ++i) l[i] = std::sin(i * 1.3f) * 3.0f;
  return l;
}

int argmax(const std::vector<float>& l) {
  int b = 0;
  for (int i = 1; i < static_cast<int>(l.size()); ++i)
    if (l[i] > l[b]) b = i;
  return b;
}

TEST(sampler, greedy_is_argmax_lowest_id_on_ties) {
  sampler s({.temperature = 0});
  const auto l = wavy(100);
  EXPECT_EQ(s.sample(l, {}), argmax(l));
  const std::vector<float> tie{1, 5, 2, 5, 5};
  EXPECT_EQ(s.sample(tie, {}), 1);
}

TEST(sampler, same_seed_same_sequence) {
  const auto l = wavy(200);
  sampler_params p{.temperature = 1.0f, .top_k = 0, .seed = 1234};
  sampler a(p), b(p);
  std::vector<int32_t> sa, sb;
  for (int i = 0; i < 200; ++i) {
    sa.push_back(a.sample(l, {}));
    sb.push_back(b.sample(l, {}));
  }
  EXPECT_EQ(sa, sb);
  p.seed = 99;
  sampler c(p);
  std::vector<int32_t> sc;
  for (int i = 0; i < 200; ++i) sc.push_back(c.sample(l, {}));
  EXPECT_NE(sa, sc);
  a.reseed(1234);
  for (int i = 0; i < 200; ++i) EXPECT_EQ(a.sample(l, {}), sa[i]);
}

TEST(sampler, temperature_follows_softmax) {
  const std::vector<float> l{0.0f, 1.0f, 2.0f};
  sampler s({.temperature = 1.0f, .top_k = 0, .seed = 5});
  std::map<int, int> count;
  const int n = 30000;
  for (int i = 0; i < n; ++i) count[s.sample(l, {})]++;
  const double z = 1 + std::exp(1.0) + std::exp(2.0);
  for (int i = 0; i < 3; ++i) EXPECT_NEAR(count[i] / double(n), std::exp(double(i)) / z, 0.015) << i;
  // A low temperature sharpens towards the argmax.
  sampler cold({.temperature = 0.1f, .top_k = 0, .seed = 5});
  int top = 0;
  for (int i = 0; i < 1000; ++i) top += cold.sample(l, {}) == 2;
  EXPECT_GT(top, 990);
}

TEST(sampler, top_k_limits_choices) {
  const auto l = wavy(50);
  std::vector<int> order(50);
  for (int i = 0; i < 50; ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](int a, int b) { return l[a] > l[b]; });
  sampler s({.temperature = 5.0f, .top_k = 3, .seed = 1});
  std::set<int> seen;
  for (int i = 0; i < 2000; ++i) seen.insert(s.sample(l, {}));
  EXPECT_EQ(seen, (std::set<int>{order[0], order[1], order[2]}));
  sampler k1({.temperature = 5.0f, .top_k = 1, .seed = 1});
  for (int i = 0; i < 50; ++i) EXPECT_EQ(k1.sample(l, {}), order[0]);
}

TEST(sampler, top_p_keeps_nucleus) {
  // p = 0.5, 0.3, 0.15, 0.05 (up to rounding): top_p 0.7 keeps the first two.
  const std::vector<float> l{std::log(0.5f), std::log(0.3f), std::log(0.15f), std::log(0.05f)};
  sampler s({.temperature = 1.0f, .top_k = 0, .top_p = 0.7f, .seed = 3});
  std::map<int, int> c;
  for (int i = 0; i < 5000; ++i) c[s.sample(l, {})]++;
  EXPECT_EQ(c.size(), 2u);
  EXPECT_NEAR(c[0] / 5000.0, 0.5 / 0.8, 0.03);
  sampler tiny({.temperature = 1.0f, .top_k = 0, .top_p = 0.01f, .seed = 3});
  for (int i = 0; i < 50; ++i) EXPECT_EQ(tiny.sample(l, {}), 0);
}

// A large, flat vocabulary: the nucleus spans hundreds of tokens, so the
// sorted prefix must grow several times; the kept set equals a full sort's.
TEST(sampler, top_p_and_min_p_on_a_large_vocabulary) {
  const int n = 5000;
  std::vector<float> l(n);
  for (int i = 0; i < n; ++i) l[i] = std::sin(i * 0.37f) * 0.5f;
  std::vector<int> order(n);
  for (int i = 0; i < n; ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](int a, int b) { return l[a] > l[b] || (l[a] == l[b] && a < b); });
  double z = 0;
  for (float x : l) z += std::exp(static_cast<double>(x));
  double cum = 0;
  std::set<int> nucleus;
  for (int id : order) {
    nucleus.insert(id);
    cum += std::exp(static_cast<double>(l[id])) / z;
    if (cum >= 0.3) break;
  }
  ASSERT_GT(nucleus.size(), 500u);
  sampler s({.temperature = 1.0f, .top_k = 0, .top_p = 0.3f, .seed = 8});
  std::set<int> seen;
  for (int i = 0; i < 20000; ++i) seen.insert(s.sample(l, {}));
  for (int id : seen) EXPECT_TRUE(nucleus.count(id)) << id;
  EXPECT_GT(seen.size(), nucleus.size() * 9 / 10);
  // min-p on the same: threshold exp(-0.2) of the best keeps logits >= max - 0.2
  sampler m({.temperature = 1.0f, .top_k = 0, .min_p = std::exp(-0.2f), .seed = 9});
  const float cut = l[order[0]] - 0.2f;
  for (int i = 0; i < 5000; ++i) EXPECT_GE(l[m.sample(l, {})], cut - 1e-5f);
}

TEST(sampler, min_p_drops_unlikely) {
  const std::vector<float> l{std::log(0.5f), std::log(0.3f), std::log(0.15f), std::log(0.05f)};
  // min_p 0.25: threshold 0.125 keeps 0.5, 0.3, 0.15.
  sampler s({.temperature = 1.0f, .top_k = 0, .min_p = 0.25f, .seed = 4});
  std::set<int> seen;
  for (int i = 0; i < 5000; ++i) seen.insert(s.sample(l, {}));
  EXPECT_EQ(seen, (std::set<int>{0, 1, 2}));
  sampler strict({.temperature = 1.0f, .top_k = 0, .min_p = 0.9f, .seed = 4});
  for (int i = 0; i < 50; ++i) EXPECT_EQ(strict.sample(l, {}), 0);
}

TEST(sampler, repetition_penalty) {
  const std::vector<float> l{2.0f, 1.9f, -1.0f, -1.1f};
  const std::vector<int32_t> hist{0, 3};
  sampler off({.temperature = 0});
  EXPECT_EQ(off.sample(l, hist), 0);
  sampler on({.temperature = 0, .repeat_penalty = 1.2f});
  EXPECT_EQ(on.sample(l, hist), 1);  // 2.0 / 1.2 < 1.9
  // Only the last repeat_last_n tokens count.
  sampler window({.temperature = 0, .repeat_penalty = 1.2f, .repeat_last_n = 1});
  EXPECT_EQ(window.sample(l, hist), 0);
  // Negative logits are pushed further down (multiplied), not up.
  const std::vector<float> neg{-1.0f, -1.05f};
  const std::vector<int32_t> h1{1};
  sampler pn({.temperature = 0, .repeat_penalty = 2.0f});
  EXPECT_EQ(pn.sample(neg, h1), 0);
  const std::vector<int32_t> h0{0};
  EXPECT_EQ(pn.sample(neg, h0), 1);  // -2.0 < -1.05
}

// Frequencies of `n` draws from `l` (ids 0..l.size()-1).
std::vector<double> frequencies(sampler& s, const std::vector<float>& l, const std::vector<int32_t>& hist, int n) {
  std::vector<double> f(l.size(), 0.0);
  for (int i = 0; i < n; ++i) f[static_cast<size_t>(s.sample(l, hist))] += 1.0 / n;
  return f;
}

// Hand-computed distributions, one filter at a time.
TEST(sampler, temperature_two_halves_the_log_odds) {
  // p ~ exp(0 / 2), exp(ln 4 / 2) = 1 : 2.
  const std::vector<float> l{0.0f, std::log(4.0f)};
  sampler s({.temperature = 2.0f, .top_k = 0, .seed = 11});
  const auto f = frequencies(s, l, {}, 30000);
  EXPECT_NEAR(f[0], 1.0 / 3, 0.012);
  EXPECT_NEAR(f[1], 2.0 / 3, 0.012);
}

TEST(sampler, top_k_renormalizes_the_kept_tokens) {
  // p ~ 1 : 2 : 3 : 4; top-k 2 keeps ids 3 and 2: 4/7 and 3/7.
  const std::vector<float> l{0.0f, std::log(2.0f), std::log(3.0f), std::log(4.0f)};
  sampler s({.temperature = 1.0f, .top_k = 2, .seed = 12});
  const auto f = frequencies(s, l, {}, 30000);
  EXPECT_EQ(f[0], 0.0);
  EXPECT_EQ(f[1], 0.0);
  EXPECT_NEAR(f[2], 3.0 / 7, 0.012);
  EXPECT_NEAR(f[3], 4.0 / 7, 0.012);
}

TEST(sampler, min_p_renormalizes_the_kept_tokens) {
  // p = 0.5, 0.3, 0.15, 0.05; min-p 0.25 keeps the first three: 0.5/0.95, 0.3/0.95, 0.15/0.95.
  const std::vector<float> l{std::log(0.5f), std::log(0.3f), std::log(0.15f), std::log(0.05f)};
  sampler s({.temperature = 1.0f, .top_k = 0, .min_p = 0.25f, .seed = 13});
  const auto f = frequencies(s, l, {}, 30000);
  EXPECT_NEAR(f[0], 0.5 / 0.95, 0.012);
  EXPECT_NEAR(f[1], 0.3 / 0.95, 0.012);
  EXPECT_NEAR(f[2], 0.15 / 0.95, 0.012);
  EXPECT_EQ(f[3], 0.0);
}

TEST(sampler, repetition_penalty_reshapes_the_distribution) {
  // Equal logits ln 4; id 0 was seen: its logit is halved to ln 2, so p = 2/6 and 4/6.
  const std::vector<float> l{std::log(4.0f), std::log(4.0f)};
  const std::vector<int32_t> hist{0};
  sampler s({.temperature = 1.0f, .top_k = 0, .repeat_penalty = 2.0f, .seed = 14});
  const auto f = frequencies(s, l, hist, 30000);
  EXPECT_NEAR(f[0], 1.0 / 3, 0.012);
  EXPECT_NEAR(f[1], 2.0 / 3, 0.012);
}

TEST(sampler, filters_chain_in_order) {
  // p ~ 8 : 4 : 2 : 1 : 1. top-k 4 drops one of the 1s (the higher id), then
  // top-p 0.9 of 8/15, 4/15, 2/15, 1/15 keeps three (cumulative 14/15 >= 0.9),
  // then min-p 0.3 drops 2 (< 0.3 * 8): left 8 : 4, i.e. 2/3 and 1/3.
  const std::vector<float> l{std::log(8.0f), std::log(4.0f), std::log(2.0f), 0.0f, 0.0f};
  sampler s({.temperature = 1.0f, .top_k = 4, .top_p = 0.9f, .min_p = 0.3f, .seed = 15});
  const auto f = frequencies(s, l, {}, 30000);
  EXPECT_NEAR(f[0], 2.0 / 3, 0.012);
  EXPECT_NEAR(f[1], 1.0 / 3, 0.012);
  EXPECT_EQ(f[2] + f[3] + f[4], 0.0);
}

TEST(sampler, log_probabilities_of_a_row) {
  const std::vector<float> l{0.0f, std::log(3.0f)};  // p = 1/4, 3/4
  EXPECT_NEAR(top_logprob(l), std::log(0.75), 1e-6);
  EXPECT_NEAR(token_logprob(l, 0), std::log(0.25), 1e-6);
  EXPECT_NEAR(token_logprob(l, 1), std::log(0.75), 1e-6);
  EXPECT_TRUE(std::isnan(token_logprob(l, 2)));
  EXPECT_TRUE(std::isnan(top_logprob({})));
  // Shifting every logit changes nothing; a one-token row is certain.
  const std::vector<float> shifted{100.0f, 100.0f + std::log(3.0f)};
  EXPECT_NEAR(top_logprob(shifted), std::log(0.75), 1e-5);
  EXPECT_EQ(top_logprob(std::vector<float>{-7.0f}), 0.0f);
  // Nothing above -inf: as a uniform row.
  const float inf = std::numeric_limits<float>::infinity();
  EXPECT_NEAR(top_logprob(std::vector<float>{-inf, -inf}), std::log(0.5), 1e-6);
}

}  // namespace
}  // namespace qf::infer
