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
