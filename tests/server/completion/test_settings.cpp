// Settings parsing: nested and flat keys, bad values keep defaults.
#include <gtest/gtest.h>

#include "server/completion/settings.h"

using namespace qf::server::completion;

TEST(settings, defaults_for_empty_or_bad_json) {
  completion_settings d;
  std::vector<std::string> w;
  completion_settings s = parse_settings("not json", &w);
  EXPECT_EQ(s.prefix_tokens, d.prefix_tokens);
  EXPECT_EQ(w.size(), 1u);
  EXPECT_EQ(parse_settings("{}").max_tokens_auto, d.max_tokens_auto);
}

TEST(settings, nested_and_flat_keys) {
  completion_settings s = parse_settings(
      R"({"completion": {"prefixTokens": 100, "stopRules": false, "promptShare": 0.5}, "completion.maxTokens": 7})");
  EXPECT_EQ(s.prefix_tokens, 100);
  EXPECT_FALSE(s.stop_rules);
  EXPECT_DOUBLE_EQ(s.prompt_share, 0.5);
  EXPECT_EQ(s.max_tokens_auto, 7);
  completion_settings q = parse_settings(R"({"quickfill": {"completion": {"cacheSlots": 2}}})");
  EXPECT_EQ(q.cache_slots, 2);
}

TEST(settings, wrong_types_and_ranges_warn) {
  std::vector<std::string> w;
  completion_settings s = parse_settings(R"({"completion": {"maxTokens": "many", "cacheSlots": 0, "speculative": 1}})", &w);
  completion_settings d;
  EXPECT_EQ(s.max_tokens_auto, d.max_tokens_auto);
  EXPECT_EQ(s.cache_slots, d.cache_slots);
  EXPECT_EQ(s.speculative, d.speculative);
  EXPECT_EQ(w.size(), 3u);
}

TEST(settings, device_is_read_from_the_top_level) {
  EXPECT_EQ(parse_settings("{}").device, "auto");
  EXPECT_EQ(parse_settings(R"({"device":"cpu"})").device, "cpu");
  EXPECT_EQ(parse_settings(R"({"quickfill":{"device":"cuda"}})").device, "cuda");
  std::vector<std::string> w;
  EXPECT_EQ(parse_settings(R"({"device":"tpu"})", &w).device, "auto");
  ASSERT_EQ(w.size(), 1u);
  EXPECT_NE(w[0].find("device"), std::string::npos);
  w.clear();
  EXPECT_EQ(parse_settings(R"({"device":7})", &w).device, "auto");
  EXPECT_EQ(w.size(), 1u);
}

TEST(settings, budgets_are_fitted_to_a_small_context) {
  completion_settings s;  // defaults are sized for a 2048-token slot
  fit_to_context(s, 512);
  const int64_t prompt_budget = int64_t(s.prefix_tokens) + s.suffix_tokens + s.extra_tokens;
  EXPECT_LE(prompt_budget + s.max_tokens_explicit + s.draft_max + s.middle_max_tokens + 16, 512);
  EXPECT_LE(s.max_tokens_explicit, 128);
  EXPECT_GT(s.prefix_tokens, s.suffix_tokens);  // proportions kept
  EXPECT_GT(s.prefix_tokens, 0);

  completion_settings big;
  const completion_settings before = big;
  fit_to_context(big, 32768);  // already fits: unchanged
  EXPECT_EQ(big.prefix_tokens, before.prefix_tokens);
  EXPECT_EQ(big.extra_tokens, before.extra_tokens);
  EXPECT_EQ(big.max_tokens_explicit, before.max_tokens_explicit);
}
