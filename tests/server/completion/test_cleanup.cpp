// Golden cases for the cleanup of the final text (finalize) and the edit
// built from it (make_candidate).
#include <gtest/gtest.h>

#include "tests/server/completion/postprocess_run.h"

using namespace qf::server::completion;
using qf::server::completion_candidate;
using qf::server::completion::testing::run;

TEST(cleanup, drops_a_tail_repeating_the_next_lines) {
  cursor_context cx = make_cursor_context("if x:\n    \n    b()\n    c()\n", 1, 4);
  trigger_decision d = decide_trigger(cx, true, {});
  ASSERT_TRUE(d.multi_line);
  EXPECT_EQ(finalize("a()\n    b()\n    c()\n", cx, d, true), "a()");
  EXPECT_EQ(finalize("a()\n    x()\n", cx, d, true), "a()\n    x()");
}

TEST(cleanup, drops_a_tail_repeating_the_text_right_of_the_cursor) {
  auto r = run("print()\n", 0, 6, "\"hello\")");
  EXPECT_EQ(r.text, "\"hello\"");
}

TEST(cleanup, trims_trailing_whitespace_and_empty_results) {
  EXPECT_EQ(run("x = \n", 0, 4, "1   ").text, "1");
  EXPECT_EQ(run("x = \n", 0, 4, "   \n").text, "");
}

TEST(cleanup, crlf_documents_get_crlf) {
  const std::string doc = "def f():\r\n    \r\nx = 1\r\n";
  auto r = run(doc, 1, 4, "a = 1\n    b = 2\nx = 1\n");
  EXPECT_EQ(r.text, "a = 1\r\n    b = 2");
  // Model output with CRLF is normalized, not doubled.
  cursor_context cx = make_cursor_context(doc, 1, 4);
  trigger_decision d = decide_trigger(cx, true, {});
  EXPECT_EQ(finalize("a\r\n    b", cx, d, true), "a\r\n    b");
}

TEST(cleanup, candidate_replaces_the_word_before_the_cursor) {
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

TEST(cleanup, labels_are_cut_at_character_boundaries) {
  // 78 ASCII bytes, then a 3-byte character straddling the cut at 77.
  const std::string text = std::string(76, 'a') + "\xE2\x82\xAC" + std::string(10, 'b');
  completion_candidate c = make_candidate(text, make_cursor_context("", 0, 0));
  EXPECT_LE(c.label.size(), k_label_bytes);
  EXPECT_EQ(c.label, std::string(76, 'a') + "...");
  EXPECT_EQ(c.insert_text, text);
}

TEST(cleanup, model_output_is_valid_utf8) {
  completion_settings s;
  cursor_context cx = make_cursor_context("x = ", 0, 4);
  trigger_decision d = decide_trigger(cx, true, s);
  // A character cut off by the end of generation is dropped; a stray byte is replaced.
  EXPECT_EQ(finalize("caf\xC3", cx, d, s.stop_rules), "caf");
  EXPECT_EQ(finalize("a\xFF" "b", cx, d, s.stop_rules), "a\xEF\xBF\xBD" "b");
}

TEST(cleanup, inserted_lines_end_with_a_line_break_even_when_the_model_stopped_without_one) {
  const std::string doc = "a = 1\nprint(a)\n";
  auto r = run(doc, 1, 0, "b = 2");
  EXPECT_FALSE(r.stopped);
  EXPECT_EQ(r.text, "b = 2\n");
}

TEST(cleanup, inserted_lines_take_the_document_line_ending) {
  const std::string doc = "a = 1\r\nprint(a)\r\n";
  auto r = run(doc, 1, 0, "b = 2\nprint(a)\n");
  EXPECT_EQ(r.text, "b = 2\r\n");
}
