// The trigger decision and the cursor context it reads.
#include <gtest/gtest.h>

#include "server/completion/postprocess/cursor_context.h"
#include "server/completion/postprocess/trigger.h"

using namespace qf::server::completion;

TEST(trigger, trigger_rules) {
  completion_settings s;
  // Mid-word with code to the right: no automatic completion, explicit is fine.
  EXPECT_TRUE(decide_trigger(make_cursor_context("foobar\n", 0, 3), false, s).skip);
  EXPECT_FALSE(decide_trigger(make_cursor_context("foobar\n", 0, 3), true, s).skip);
  EXPECT_FALSE(decide_trigger(make_cursor_context("foo)\n", 0, 3), false, s).skip);
  s.auto_trigger_mid_word = true;
  EXPECT_FALSE(decide_trigger(make_cursor_context("foobar\n", 0, 3), false, s).skip);
  completion_settings d;
  EXPECT_FALSE(decide_trigger(make_cursor_context("x = f\n", 0, 5), false, d).multi_line);
  EXPECT_TRUE(decide_trigger(make_cursor_context("    \n", 0, 4), false, d).multi_line);
  EXPECT_TRUE(decide_trigger(make_cursor_context("if x:\n", 0, 5), false, d).multi_line);
  EXPECT_TRUE(decide_trigger(make_cursor_context("x = f\n", 0, 5), true, d).multi_line);
  EXPECT_FALSE(decide_trigger(make_cursor_context("f(x)\n", 0, 2), true, d).multi_line);  // code to the right
  d.multi_line = false;
  EXPECT_FALSE(decide_trigger(make_cursor_context("    \n", 0, 4), true, d).multi_line);
}

// Column 0 of a line with code: the suggestion is whole lines put before that code.
TEST(trigger, column_0_of_a_line_with_code_inserts_lines) {
  const std::string doc = "def f(xs):\n    total = 0\n    return total\n";
  const cursor_context cx = make_cursor_context(doc, 2, 0);
  EXPECT_TRUE(decide_trigger(cx, false, {}).inserts_lines);
  EXPECT_FALSE(decide_trigger(make_cursor_context(doc, 2, 4), false, {}).inserts_lines);  // after the indentation
  EXPECT_FALSE(decide_trigger(make_cursor_context("x\n\ny\n", 1, 0), false, {}).inserts_lines);  // an empty line
}

TEST(trigger, lone_cr_documents_are_split_in_kind) {
  // The cursor line is line 2 of a document whose lines end with a lone CR.
  cursor_context cx = make_cursor_context("def f():\r    x = 1\r    ret\r    pass", 2, 7);
  EXPECT_EQ(cx.line_before, "    ret");
  EXPECT_EQ(cx.eol, "\r");
  ASSERT_EQ(cx.next_lines.size(), 1u);
  EXPECT_EQ(cx.next_lines[0], "    pass");
}
