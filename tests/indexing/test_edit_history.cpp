// Edit history (coalescing, shifting, bounds, unified diffs) and the ring of
// recently edited/viewed chunks (de-duplication by line similarity, bounds).
#include <gtest/gtest.h>

#include <string>

#include "indexing/edit_history.h"
#include "indexing/recent_chunks.h"

using namespace qf::index;

namespace {
const std::string k_uri = "file:///proj/a.py";
}

TEST(edit_history, keystrokes_in_one_place_coalesce_into_one_hunk) {
  edit_history h;
  std::string text = "def f():\n    return 1\n";
  std::string prev = text;
  for (char c : std::string("x = 2")) {
    text.insert(text.find("    return"), 1, c);
    h.record(k_uri, prev, text, 1);
    prev = text;
  }
  ASSERT_EQ(h.size(), 1u);
  const edit_hunk hk = h.recent().front();
  EXPECT_EQ(hk.line, 1u);
  EXPECT_EQ(hk.old_lines, std::vector<std::string>{"    return 1"});
  EXPECT_EQ(hk.new_lines, std::vector<std::string>{"x = 2    return 1"});
  EXPECT_EQ(render_unified_diff(hk), "--- a/proj/a.py\n+++ b/proj/a.py\n@@ -2 +2 @@\n-    return 1\n+x = 2    return 1\n");
}

TEST(edit_history, enter_and_typing_on_extends_the_hunk_and_undo_removes_it) {
  edit_history h;
  const std::string a = "a\nb\nc\n";
  const std::string b = "a\nb\nnew\nc\n";
  const std::string c = "a\nb\nnew\nmore\nc\n";
  h.record(k_uri, a, b, 1);
  h.record(k_uri, b, c, 2);
  ASSERT_EQ(h.size(), 1u);
  const edit_hunk hk = h.recent().front();
  EXPECT_TRUE(hk.old_lines.empty());
  EXPECT_EQ(hk.new_lines, (std::vector<std::string>{"new", "more"}));
  EXPECT_EQ(render_unified_diff(hk), "--- a/proj/a.py\n+++ b/proj/a.py\n@@ -2,0 +3,2 @@\n+new\n+more\n");
  // Deleting the two lines again leaves nothing to show.
  h.record(k_uri, c, a, 3);
  EXPECT_EQ(h.size(), 0u);
}

TEST(edit_history, edits_far_apart_are_separate_hunks_and_shift_the_ones_below) {
  edit_history h;
  std::string t;
  for (int i = 0; i < 20; ++i) t += "line" + std::to_string(i) + "\n";
  std::string t2 = t;
  t2.replace(t2.find("line15"), 6, "LINE15");
  h.record(k_uri, t, t2, 1);
  std::string t3 = "inserted\n" + t2;  // above the first hunk
  h.record(k_uri, t2, t3, 2);
  ASSERT_EQ(h.size(), 2u);
  std::vector<edit_hunk> r = h.recent();
  EXPECT_EQ(r[0].line, 0u);
  EXPECT_EQ(r[1].line, 16u);  // moved down by the inserted line
  EXPECT_EQ(r[1].new_lines, std::vector<std::string>{"LINE15"});
  // Per document and across documents.
  h.record("file:///proj/b.py", "x\n", "y\n", 1);
  EXPECT_EQ(h.recent(k_uri).size(), 2u);
  EXPECT_EQ(h.recent().size(), 3u);
  EXPECT_EQ(h.recent().front().uri, "file:///proj/b.py");
  h.forget(k_uri);
  EXPECT_EQ(h.size(), 1u);
}

TEST(edit_history, count_bytes_and_hunk_lines_are_bounded) {
  edit_history_limits lim;
  lim.max_hunks = 4;
  lim.max_bytes = 400;
  lim.max_hunk_lines = 3;
  edit_history h(lim);
  for (int i = 0; i < 10; ++i)
    h.record("file:///f" + std::to_string(i), "a\n", "b" + std::string(50, 'x') + "\n", 1);
  EXPECT_LE(h.size(), 4u);
  EXPECT_LE(h.bytes(), 400u);
  EXPECT_EQ(h.recent().front().uri, "file:///f9");  // the oldest went first
  edit_history big(lim);
  big.record(k_uri, "", "1\n2\n3\n4\n5\n6\n", 1);
  ASSERT_EQ(big.size(), 1u);
  EXPECT_TRUE(big.recent().front().truncated);
  EXPECT_EQ(big.recent().front().new_lines.size(), 3u);
}

TEST(recent_chunks, similar_chunks_replace_each_other_and_the_ring_is_bounded) {
  recent_chunks_limits lim;
  lim.max_chunks = 3;
  lim.chunk_lines = 8;
  recent_chunks ring(lim);
  std::string text;
  for (int i = 0; i < 100; ++i) text += "stmt_" + std::to_string(i) + "()\n";
  ring.touch(k_uri, text, 10);
  ring.touch(k_uri, text, 11);  // mostly the same lines: replaces
  ASSERT_EQ(ring.size(), 1u);
  EXPECT_EQ(ring.recent().front().first_line, 7u);
  EXPECT_EQ(ring.recent().front().text.substr(0, 9), "stmt_7()\n");
  ring.touch(k_uri, text, 50);
  ring.touch("file:///proj/b.py", "other()\nthing()\n", 0);
  ring.touch(k_uri, text, 80);
  EXPECT_EQ(ring.size(), 3u);  // the oldest (line 11) went
  std::vector<text_chunk> r = ring.recent();
  EXPECT_EQ(r[0].first_line, 76u);
  EXPECT_EQ(r[1].uri, "file:///proj/b.py");
  EXPECT_EQ(r[2].first_line, 46u);
  EXPECT_DOUBLE_EQ(line_similarity("a\nb\n", "b\na\n"), 1.0);
  EXPECT_DOUBLE_EQ(line_similarity("a\nb\n", "c\nd\n"), 0.0);
  ring.forget(k_uri);
  EXPECT_EQ(ring.size(), 1u);
}
