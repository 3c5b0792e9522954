// Golden cases for every stop rule and post-processing step.
#include <gtest/gtest.h>

#include "server/completion/postprocess/postprocess.h"

using namespace qf::server::completion;
using qf::server::completion_candidate;

namespace {

struct run_result {
  std::string text;       // finalized
  bool stopped = false;   // a stop rule fired while streaming
};

// Streams `gen` one character at a time through the stop rules, then finalizes.
run_result run(const std::string& doc, int64_t line, int64_t col, const std::string& gen, bool explicit_trigger = false,
               completion_settings s = {}) {
  cursor_context cx = make_cursor_context(doc, line, col);
  trigger_decision d = decide_trigger(cx, explicit_trigger, s);
  stop_checker sc(cx, d, s.stop_rules);
  run_result r;
  for (char c : gen) {
    if (sc.push(std::string(1, c))) {
      r.stopped = true;
      break;
    }
  }
  r.text = finalize(sc.kept(), cx, d, s.stop_rules);
  return r;
}

}  // namespace

TEST(postprocess, single_line_stops_at_newline) {
  auto r = run("x = \ny = 2\n", 0, 4, "foo(1)\nbar()\n");
  EXPECT_TRUE(r.stopped);
  EXPECT_EQ(r.text, "foo(1)");
}

TEST(postprocess, multi_line_on_an_empty_line_stops_when_indent_drops) {
  const std::string doc = "def f(x):\n    \nprint(1)\n";
  auto r = run(doc, 1, 4, "y = x + 1\n    return y\n\nprint(f(2))\n");
  EXPECT_TRUE(r.stopped);
  EXPECT_EQ(r.text, "y = x + 1\n    return y");
}

TEST(postprocess, multi_line_after_a_block_opener_stops_back_at_base_indent) {
  const std::string doc = "def f(x):\n";
  auto r = run(doc, 0, 9, "\n    return x\ndef g():\n    pass\n");
  EXPECT_TRUE(r.stopped);
  EXPECT_EQ(r.text, "\n    return x");
}

TEST(postprocess, block_opener_keeps_the_closing_bracket_line) {
  const std::string doc = "int f() {\n";
  auto r = run(doc, 0, 9, "\n  return 1;\n}\nint g() {\n");
  EXPECT_TRUE(r.stopped);
  EXPECT_EQ(r.text, "\n  return 1;\n}");
}

TEST(postprocess, stops_before_a_line_repeating_the_next_line) {
  const std::string doc = "def f():\n    \n    return 2\n";
  auto r = run(doc, 1, 4, "a = 1\n    return 2\n    more\n");
  EXPECT_TRUE(r.stopped);
  EXPECT_EQ(r.text, "a = 1");
}

TEST(postprocess, drops_a_tail_repeating_the_next_lines) {
  cursor_context cx = make_cursor_context("if x:\n    \n    b()\n    c()\n", 1, 4);
  trigger_decision d = decide_trigger(cx, true, {});
  ASSERT_TRUE(d.multi_line);
  EXPECT_EQ(finalize("a()\n    b()\n    c()\n", cx, d, true), "a()");
  EXPECT_EQ(finalize("a()\n    x()\n", cx, d, true), "a()\n    x()");
}

TEST(postprocess, drops_a_tail_repeating_the_text_right_of_the_cursor) {
  auto r = run("print()\n", 0, 6, "\"hello\")");
  EXPECT_EQ(r.text, "\"hello\"");
}

TEST(postprocess, trims_trailing_whitespace_and_empty_results) {
  EXPECT_EQ(run("x = \n", 0, 4, "1   ").text, "1");
  EXPECT_EQ(run("x = \n", 0, 4, "   \n").text, "");
}

TEST(postprocess, crlf_documents_get_crlf) {
  const std::string doc = "def f():\r\n    \r\nx = 1\r\n";
  auto r = run(doc, 1, 4, "a = 1\n    b = 2\nx = 1\n");
  EXPECT_EQ(r.text, "a = 1\r\n    b = 2");
  // Model output with CRLF is normalized, not doubled.
  cursor_context cx = make_cursor_context(doc, 1, 4);
  trigger_decision d = decide_trigger(cx, true, {});
  EXPECT_EQ(finalize("a\r\n    b", cx, d, true), "a\r\n    b");
}

TEST(postprocess, trigger_rules) {
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

TEST(postprocess, stop_rules_off_keeps_everything) {
  completion_settings s;
  s.stop_rules = false;
  auto r = run("x = \ny\n", 0, 4, "a\nb\n  c  ", false, s);
  EXPECT_FALSE(r.stopped);
  EXPECT_EQ(r.text, "a\nb\n  c  ");
}

TEST(postprocess, deadline_cut_keeps_whole_lines_in_multi_line_mode) {
  cursor_context cx = make_cursor_context("    \n", 0, 4);
  trigger_decision d = decide_trigger(cx, false, {});
  stop_checker sc(cx, d, true);
  sc.push("a = 1\n    b = ");
  EXPECT_FALSE(sc.at_line_end());
  EXPECT_EQ(sc.kept_at_deadline(), "a = 1");
}

TEST(postprocess, candidate_replaces_the_word_before_the_cursor) {
  cursor_context cx = make_cursor_context("    ret\n", 0, 7);
  completion_candidate c = make_candidate("urn x", cx);
  EXPECT_EQ(c.replace_begin.line, 0);
  EXPECT_EQ(c.replace_begin.byte_col, 4);
  EXPECT_EQ(c.replace_end.byte_col, 7);
  EXPECT_EQ(c.insert_text, "return x");
  EXPECT_EQ(c.filter_text, "return x");
  EXPECT_EQ(c.label, "return x");
  completion_candidate m = make_candidate("urn x\n    y", cx);
  EXPECT_EQ(m.label, "return x ...");
}

TEST(postprocess, labels_are_cut_at_character_boundaries) {
  // 78 ASCII bytes, then a 3-byte character straddling the cut at 77.
  const std::string text = std::string(76, 'a') + "\xE2\x82\xAC" + std::string(10, 'b');
  completion_candidate c = make_candidate(text, make_cursor_context("", 0, 0));
  EXPECT_LE(c.label.size(), k_label_bytes);
  EXPECT_EQ(c.label, std::string(76, 'a') + "...");
  EXPECT_EQ(c.insert_text, text);
}

TEST(postprocess, model_output_is_valid_utf8) {
  completion_settings s;
  cursor_context cx = make_cursor_context("x = ", 0, 4);
  trigger_decision d = decide_trigger(cx, true, s);
  // A character cut off by the end of generation is dropped; a stray byte is replaced.
  EXPECT_EQ(finalize("caf\xC3", cx, d, s.stop_rules), "caf");
  EXPECT_EQ(finalize("a\xFF" "b", cx, d, s.stop_rules), "a\xEF\xBF\xBD" "b");
}

TEST(postprocess, lone_cr_documents_are_split_and_answered_in_kind) {
  // The cursor line is line 2 of a document whose lines end with a lone CR.
  cursor_context cx = make_cursor_context("def f():\r    x = 1\r    ret\r    pass", 2, 7);
  EXPECT_EQ(cx.line_before, "    ret");
  EXPECT_EQ(cx.eol, "\r");
  ASSERT_EQ(cx.next_lines.size(), 1u);
  EXPECT_EQ(cx.next_lines[0], "    pass");
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
TEST(postprocess, at_column_0_of_a_line_with_code_a_line_is_inserted_before_it) {
  const std::string doc = "def f(xs):\n    total = 0\n    return total\n";
  // The model writes the missing line, then the code right of the cursor.
  auto r = run(doc, 2, 0, "    for x in xs:\n    return total\n");
  EXPECT_TRUE(r.stopped);
  EXPECT_EQ(r.text, "    for x in xs:\n");
  // The trigger says so.
  const cursor_context cx = make_cursor_context(doc, 2, 0);
  EXPECT_TRUE(decide_trigger(cx, false, {}).inserts_lines);
  EXPECT_FALSE(decide_trigger(make_cursor_context(doc, 2, 4), false, {}).inserts_lines);  // after the indentation
  EXPECT_FALSE(decide_trigger(make_cursor_context("x\n\ny\n", 1, 0), false, {}).inserts_lines);  // an empty line
}

TEST(postprocess, inserted_lines_end_with_a_line_break_even_when_the_model_stopped_without_one) {
  const std::string doc = "a = 1\nprint(a)\n";
  auto r = run(doc, 1, 0, "b = 2");
  EXPECT_FALSE(r.stopped);
  EXPECT_EQ(r.text, "b = 2\n");
}

TEST(postprocess, a_model_that_repeats_the_code_right_of_the_cursor_inserts_nothing) {
  const std::string doc = "a = 1\nprint(a)\n";
  auto r = run(doc, 1, 0, "print(a)\nb = 2\n");
  EXPECT_TRUE(r.stopped);
  EXPECT_EQ(r.text, "");
}

TEST(postprocess, invoked_at_column_0_several_lines_are_inserted_up_to_the_code_right_of_the_cursor) {
  const std::string doc = "def f(xs):\n    total = 0\n        total += x\n    return total\n";
  auto r = run(doc, 2, 0, "    for x in xs:\n        if x > 0:\n            total += x\n    return total\n",
               /*explicit_trigger=*/true);
  EXPECT_TRUE(r.stopped);
  EXPECT_EQ(r.text, "    for x in xs:\n        if x > 0:\n");
  // Automatic: one line.
  auto a = run(doc, 2, 0, "    for x in xs:\n        if x > 0:\n            total += x\n    return total\n");
  EXPECT_EQ(a.text, "    for x in xs:\n");
}

TEST(postprocess, inserted_lines_stop_where_they_dedent_below_the_code_right_of_the_cursor) {
  const std::string doc = "class A:\n    def f(self):\n        pass\n    def h(self):\n        pass\n";
  auto r = run(doc, 3, 0, "    def g(self):\n        return 1\nclass B:\n    pass\n", /*explicit_trigger=*/true);
  EXPECT_TRUE(r.stopped);
  EXPECT_EQ(r.text, "    def g(self):\n        return 1\n");
}

TEST(postprocess, inserted_lines_take_the_document_line_ending) {
  const std::string doc = "a = 1\r\nprint(a)\r\n";
  auto r = run(doc, 1, 0, "b = 2\nprint(a)\n");
  EXPECT_EQ(r.text, "b = 2\r\n");
}
