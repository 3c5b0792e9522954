// Type-through cache: typed characters matching the suggestion are answered
// from it; anything else misses.
#include <gtest/gtest.h>

#include "server/completion/decode/type_through.h"

using qf::server::completion::type_through_cache;

TEST(type_through, typed_prefix_of_suggestion_hits_and_moves_forward) {
  type_through_cache c;
  const std::string before = "x = \ny\n";
  c.remember("u", before, 4, "foo(1)");
  EXPECT_EQ(c.lookup("u", "x = f\ny\n", 5).value_or("<miss>"), "oo(1)");
  EXPECT_EQ(c.lookup("u", "x = foo\ny\n", 7).value_or("<miss>"), "(1)");
  // Typing all of it leaves nothing to suggest.
  EXPECT_FALSE(c.lookup("u", "x = foo(1)\ny\n", 10).has_value());
}

TEST(type_through, mismatches_miss) {
  type_through_cache c;
  c.remember("u", "x = \ny\n", 4, "foo(1)");
  EXPECT_FALSE(c.lookup("u", "x = g\ny\n", 5).has_value());      // other character
  EXPECT_FALSE(c.lookup("v", "x = f\ny\n", 5).has_value());      // other document
  EXPECT_FALSE(c.lookup("u", "x = f\nz\n", 5).has_value());      // text elsewhere changed
  EXPECT_FALSE(c.lookup("u", "x = \ny\n", 4).has_value());       // nothing typed
  EXPECT_FALSE(c.lookup("u", "x = f\ny\n", 4).has_value());      // cursor not after the typed text
  c.forget("u");
  EXPECT_FALSE(c.lookup("u", "x = f\ny\n", 5).has_value());
}
