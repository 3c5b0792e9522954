// Rows (text_rows.h): short lines are rows as they are, long lines are cut
// into bounded rows at stable, character-safe places, and the window around
// the cursor agrees with the rows of the whole document.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "server/completion/prompt/text_rows.h"

using namespace qf::server::completion;

namespace {

std::vector<std::string_view> all_rows(std::string_view text) {
  std::vector<std::string_view> out;
  for_each_row(text, [&](std::string_view r) {
    out.push_back(r);
    return true;
  });
  return out;
}

// A long line of code-like text with two-byte characters in it.
std::string long_line(size_t bytes) {
  std::string s;
  for (unsigned i = 0; s.size() < bytes; ++i) {
    s += 'v';
    s += std::to_string(i);
    s += "=f(\xc3\xa9";
    s += std::to_string(i % 7);
    s += ");";
  }
  return s;
}

bool is_char_start(std::string_view text, size_t off) {
  return off >= text.size() || (static_cast<unsigned char>(text[off]) & 0xC0) != 0x80;
}

}  // namespace

TEST(text_rows, short_lines_are_the_lines) {
  using rows = std::vector<std::string_view>;
  EXPECT_EQ(all_rows(""), (rows{""}));
  EXPECT_EQ(all_rows("a"), (rows{"a"}));
  EXPECT_EQ(all_rows("a\n"), (rows{"a\n", ""}));
  EXPECT_EQ(all_rows("a\nb"), (rows{"a\n", "b"}));
  EXPECT_EQ(all_rows("a\r\nb\r\n"), (rows{"a\r\n", "b\r\n", ""}));
  EXPECT_EQ(all_rows("\n\n"), (rows{"\n", "\n", ""}));
  EXPECT_EQ(all_rows("x = 1\n    y\n"), (rows{"x = 1\n", "    y\n", ""}));
}

TEST(text_rows, long_line_is_cut_into_bounded_rows_at_character_boundaries) {
  const std::string line = long_line(100000);
  const std::string text = "head\n" + line + "\ntail\n";
  const auto rows = all_rows(text);
  ASSERT_GT(rows.size(), 100000 / k_row_bytes);
  std::string joined;
  for (size_t i = 0; i < rows.size(); ++i) {
    EXPECT_LE(rows[i].size(), k_max_row_bytes + 1) << i;  // + its '\n'
    const size_t off = static_cast<size_t>(rows[i].data() - text.data());
    EXPECT_TRUE(is_char_start(text, off)) << "row " << i << " starts inside a character";
    joined.append(rows[i]);
  }
  EXPECT_EQ(joined, text);
  EXPECT_EQ(rows.front(), "head\n");
  EXPECT_EQ(rows[rows.size() - 2], "tail\n");
  // Cuts come after a statement or a call (there is one within every k_row_bytes / 4 here).
  for (size_t i = 1; i + 3 < rows.size(); ++i) EXPECT_TRUE(rows[i].back() == ';' || rows[i].back() == ')') << rows[i];
}

TEST(text_rows, typing_at_the_end_of_a_long_line_keeps_the_rows_before) {
  std::string text = long_line(5000);
  const auto before = all_rows(text);
  for (int i = 0; i < 600; ++i) text += static_cast<char>('a' + i % 26);
  const auto after = all_rows(text);
  ASSERT_GT(after.size(), before.size());
  for (size_t i = 0; i + 1 < before.size(); ++i) EXPECT_EQ(before[i], after[i]) << i;
}

TEST(text_rows, window_agrees_with_the_rows_of_the_whole_text) {
  const std::string text = "a\n" + long_line(3000) + "\nb\n\n" + long_line(700) + "\nlast";
  const auto rows = all_rows(text);
  // Every cursor position of every line.
  std::vector<size_t> line_starts{0};
  for (size_t i = 0; i < text.size(); ++i)
    if (text[i] == '\n') line_starts.push_back(i + 1);
  for (size_t l = 0; l < line_starts.size(); ++l) {
    const size_t end = l + 1 < line_starts.size() ? line_starts[l + 1] - 1 : text.size();
    for (size_t col = 0; col <= end - line_starts[l]; col += 37) {
      const row_window w = rows_around(text, static_cast<int64_t>(l), static_cast<int64_t>(col), 5, 3);
      ASSERT_EQ(w.cursor, line_starts[l] + col);
      ASSERT_GE(w.cursor_row, 0);
      ASSERT_LT(w.cursor_row, static_cast<int64_t>(rows.size()));
      const std::string_view cur = rows[static_cast<size_t>(w.cursor_row)];
      const size_t cur_off = static_cast<size_t>(cur.data() - text.data());
      EXPECT_EQ(w.cursor_col, static_cast<int64_t>(w.cursor - cur_off));
      EXPECT_LE(w.cursor_col, static_cast<int64_t>(cur.size()));
      EXPECT_EQ(w.first_row, std::max<int64_t>(0, w.cursor_row - 5));
      EXPECT_EQ(w.end_row(), std::min<int64_t>(static_cast<int64_t>(rows.size()), w.cursor_row + 4));
      for (int64_t r = w.first_row; r < w.end_row(); ++r) EXPECT_EQ(w.row(r), rows[static_cast<size_t>(r)]);
      EXPECT_EQ(w.at_document_end, w.end_row() == static_cast<int64_t>(rows.size()));
    }
  }
}

TEST(text_rows, window_clamps_the_cursor) {
  const std::string text = "ab\ncd\r\n";
  row_window w = rows_around(text, 9, 9, 10, 10);  // past the last line: the empty last line
  EXPECT_EQ(w.cursor_line, 2);
  EXPECT_EQ(w.cursor, text.size());
  w = rows_around(text, 1, 99, 10, 10);  // past the end of line 1: before its "\r\n"
  EXPECT_EQ(w.cursor, 5u);
  EXPECT_EQ(w.cursor_row, 1);
  EXPECT_EQ(w.cursor_col, 2);
}

TEST(text_rows, window_of_a_huge_line_is_small) {
  const std::string text = long_line(10u << 20);
  const row_window w = rows_around(text, 0, static_cast<int64_t>(text.size() / 2), 500, 100);
  ASSERT_EQ(w.rows.size(), 601u);
  size_t bytes = 0;
  for (auto r : w.rows) bytes += r.size();
  EXPECT_LE(bytes, 601 * k_max_row_bytes);
  EXPECT_EQ(w.cursor, text.size() / 2);
}
