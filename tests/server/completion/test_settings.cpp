// The completion section's own logic: fitting the token budgets to a model's
// context. Parsing the settings object (types, ranges, defaults, nested and
// flat keys, device) is the server's schema, tested in
// tests/server/test_settings.cpp.
#include <gtest/gtest.h>

#include "server/completion/api/settings.h"

using namespace qf::server::completion;

TEST(settings, defaults_fit_the_default_context) {
  completion_settings s;
  const completion_settings before = s;
  fit_to_context(s, s.context_tokens);
  EXPECT_EQ(s.prefix_tokens, before.prefix_tokens);
  EXPECT_EQ(s.max_tokens_explicit, before.max_tokens_explicit);
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
