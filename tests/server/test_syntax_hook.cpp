// The server core feeds the syntax index from the document store's change
// path: open, applied changes and close reach it; a rejected change does not.
#include <gtest/gtest.h>

#include "indexing/syntax_language.h"
#include "indexing/syntax_tree.h"
#include "server/core/server_core.h"

using namespace qf;

TEST(SyntaxHook, DocumentEventsReachTheSyntaxIndex) {
  if (!index::syntax_language_named("python")) GTEST_SKIP() << "python grammar not built";
  server::server_core core(server::core_options{}, [](std::function<void()>) {});
  const std::string uri = "file:///w/a.py";
  std::string error;
  ASSERT_TRUE(core.open(uri, "python", 1, "def f(x):\n    return x\n", &error)) << error;
  core.syntax().wait_idle();
  ASSERT_NE(core.syntax().latest(uri), nullptr);
  EXPECT_EQ(core.syntax().latest(uri)->version(), 1);

  ASSERT_TRUE(core.change(uri, 2, {index::text_change{index::text_range{1, 12, 1, 12}, " + 1"}},
                          text::position_encoding::utf16, &error))
      << error;
  core.syntax().wait_idle();
  auto t = core.syntax().latest(uri);
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(t->version(), 2);
  EXPECT_EQ(t->doc().text, "def f(x):\n    return x + 1\n");
  EXPECT_FALSE(t->has_error());

  // A malformed change leaves the text, and so the tree, as they were.
  EXPECT_FALSE(core.change(uri, 3, {index::text_change{index::text_range{9, 0, 9, 0}, "oops"}},
                           text::position_encoding::utf16, &error));
  core.syntax().wait_idle();
  EXPECT_EQ(core.syntax().latest(uri)->version(), 2);
  EXPECT_EQ(core.syntax().state(uri), index::syntax_state::parsed);

  core.close(uri);
  EXPECT_EQ(core.syntax().latest(uri), nullptr);
  EXPECT_EQ(core.syntax().state(uri), index::syntax_state::none);
}
