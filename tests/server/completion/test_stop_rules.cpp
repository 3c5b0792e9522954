// Golden cases for every stop rule: a suggestion streamed through the stop
// checker one character at a time, then cleaned up (postprocess_run.h).
#include <gtest/gtest.h>

#include "tests/server/completion/postprocess_run.h"

using namespace qf::server::completion;
using qf::server::completion::testing::run;

TEST(stop_rules, single_line_stops_at_newline) {
  auto r = run("x = \ny = 2\n", 0, 4, "foo(1)\nbar()\n");
  EXPECT_TRUE(r.stopped);
  EXPECT_EQ(r.text, "foo(1)");
}

TEST(stop_rules, multi_line_on_an_empty_line_stops_when_indent_drops) {
  const std::string doc = "def f(x):\n    \nprint(1)\n";
  auto r = run(doc, 1, 4, "y = x + 1\n    return y\n\nprint(f(2))\n");
  EXPECT_TRUE(r.stopped);
  EXPECT_EQ(r.text, "y = x + 1\n    return y");
}

TEST(stop_rules, multi_line_after_a_block_opener_stops_back_at_base_indent) {
  const std::string doc = "def f(x):\n";
  auto r = run(doc, 0, 9, "\n    return x\ndef g():\n    pass\n");
  EXPECT_TRUE(r.stopped);
  EXPECT_EQ(r.text, "\n    return x");
}

TEST(stop_rules, block_opener_keeps_the_closing_bracket_line) {
  const std::string doc = "int f() {\n";
  auto r = run(doc, 0, 9, "\n  return 1;\n}\nint g() {\n");
  EXPECT_TRUE(r.stopped);
  EXPECT_EQ(r.text, "\n  return 1;\n}");
}

TEST(stop_rules, stops_before_a_line_repeating_the_next_line) {
  const std::string doc = "def f():\n    \n    return 2\n";
  auto r = run(doc, 1, 4, "a = 1\n    return 2\n    more\n");
  EXPECT_TRUE(r.stopped);
  EXPECT_EQ(r.text, "a = 1");
}

TEST(stop_rules, stop_rules_off_keeps_everything) {
  completion_settings s;
  s.stop_rules = false;
  auto r = run("x = \ny\n", 0, 4, "a\nb\n  c  ", false, s);
  EXPECT_FALSE(r.stopped);
  EXPECT_EQ(r.text, "a\nb\n  c  ");
}

TEST(stop_rules, deadline_cut_keeps_whole_lines_in_multi_line_mode) {
  cursor_context cx = make_cursor_context("    \n", 0, 4);
  trigger_decision d = decide_trigger(cx, false, {});
  stop_checker sc(cx, d, true);
  sc.push("a = 1\n    b = ");
  EXPECT_FALSE(sc.at_line_end());
  EXPECT_EQ(sc.kept_at_deadline(), "a = 1");
  // What decoding hands on: cut to whole lines only when the deadline ended it.
  EXPECT_EQ(sc.final_text(/*deadline_hit=*/true), "a = 1");
  EXPECT_EQ(sc.final_text(/*deadline_hit=*/false), "a = 1\n    b = ");
}

TEST(stop_rules, a_stop_rule_wins_over_the_deadline) {
  cursor_context cx = make_cursor_context("x = \ny = 2\n", 0, 4);
  trigger_decision d = decide_trigger(cx, false, {});
  stop_checker sc(cx, d, true);
  EXPECT_TRUE(sc.push("foo(1)\nbar()"));
  EXPECT_EQ(sc.final_text(/*deadline_hit=*/true), "foo(1)");
}

TEST(stop_rules, generated_cr_and_crlf_are_line_breaks) {
  cursor_context cx = make_cursor_context("def f():\r    x = 1\r    ret\r    pass", 2, 7);
  completion_settings s;
  trigger_decision d = decide_trigger(cx, true, s);
  // Generated "\r\n" and "\r" both count as line breaks for the stop rules,
  // and the answer uses the document's own ending.
  stop_checker sc(cx, d, s.stop_rules);
  sc.push("urn 1\r");
  sc.push("\n    y\r    z");
  EXPECT_EQ(finalize(sc.kept(), cx, d, s.stop_rules), "urn 1\r    y\r    z");
}

// Column 0 of a line with code: the suggestion is whole lines put before that
// code, so it ends with a line break and the code starts the next line.
TEST(stop_rules, at_column_0_of_a_line_with_code_a_line_is_inserted_before_it) {
  const std::string doc = "def f(xs):\n    total = 0\n    return total\n";
  // The model writes the missing line, then the code right of the cursor.
  auto r = run(doc, 2, 0, "    for x in xs:\n    return total\n");
  EXPECT_TRUE(r.stopped);
  EXPECT_EQ(r.text, "    for x in xs:\n");
}

TEST(stop_rules, a_model_that_repeats_the_code_right_of_the_cursor_inserts_nothing) {
  const std::string doc = "a = 1\nprint(a)\n";
  auto r = run(doc, 1, 0, "print(a)\nb = 2\n");
  EXPECT_TRUE(r.stopped);
  EXPECT_EQ(r.text, "");
}

TEST(stop_rules, invoked_at_column_0_several_lines_are_inserted_up_to_the_code_right_of_the_cursor) {
  const std::string doc = "def f(xs):\n    total = 0\n        total += x\n    return total\n";
  auto r = run(doc, 2, 0, "    for x in xs:\n        if x > 0:\n            total += x\n    return total\n",
               /*explicit_trigger=*/true);
  EXPECT_TRUE(r.stopped);
  EXPECT_EQ(r.text, "    for x in xs:\n        if x > 0:\n");
  // Automatic: one line.
  auto a = run(doc, 2, 0, "    for x in xs:\n        if x > 0:\n            total += x\n    return total\n");
  EXPECT_EQ(a.text, "    for x in xs:\n");
}

TEST(stop_rules, inserted_lines_stop_where_they_dedent_below_the_code_right_of_the_cursor) {
  const std::string doc = "class A:\n    def f(self):\n        pass\n    def h(self):\n        pass\n";
  auto r = run(doc, 3, 0, "    def g(self):\n        return 1\nclass B:\n    pass\n", /*explicit_trigger=*/true);
  EXPECT_TRUE(r.stopped);
  EXPECT_EQ(r.text, "    def g(self):\n        return 1\n");
}
