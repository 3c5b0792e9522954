// Line breaks (text/lines.h): "\r\n", "\n" and a lone "\r" end a line, the
// one definition shared by every component, and the line table
// (text/position.h) sees the same lines.
#include <gtest/gtest.h>

#include <cstdint>
#include <string_view>
#include <vector>

#include "text/lines.h"
#include "text/position.h"

using namespace qf::text;

TEST(Lines, AllThreeTerminatorsAgree) {
  const std::string_view text = "a\r\nb\rc\nd";
  const std::vector<std::string_view> lines = split_lines(text);
  ASSERT_EQ(lines.size(), 4u);
  EXPECT_EQ(lines[0], "a\r\n");
  EXPECT_EQ(lines[1], "b\r");
  EXPECT_EQ(lines[2], "c\n");
  EXPECT_EQ(lines[3], "d");
  EXPECT_EQ(strip_line_break(lines[0]), "a");
  EXPECT_EQ(strip_line_break(lines[1]), "b");
  // The line table of the document store sees the same lines.
  const line_table table(text);
  ASSERT_EQ(table.line_count(), lines.size());
  std::size_t start = 0;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    EXPECT_EQ(table.line_start(i), start) << i;
    EXPECT_EQ(table.line_end(i) - table.line_start(i), strip_line_break(lines[i]).size()) << i;
    EXPECT_EQ(line_start_offset(text, static_cast<std::int64_t>(i)), start) << i;
    start += lines[i].size();
  }
  EXPECT_EQ(offset_of_line_col(text, 1, 99), 4u);  // clamps before the "\r"
  EXPECT_EQ(offset_of_line_col(text, 2, 1), 6u);
  EXPECT_EQ(offset_of_line_col(text, 9, 0), text.size());
  EXPECT_EQ(line_col_of_offset(text, 6).line, 2);
  EXPECT_EQ(line_col_of_offset(text, 6).col, 1);
  EXPECT_EQ(line_col_of_offset(text, 7).line, 3);
  EXPECT_EQ(line_col_of_offset(text, 2).line, 0);  // inside "\r\n": the line it ends
  EXPECT_EQ(first_line_ending(text), "\r\n");
  EXPECT_EQ(first_line_ending("x\ry"), "\r");
  EXPECT_EQ(first_line_ending("none"), "\n");
  EXPECT_EQ(split_lines("").size(), 1u);
  EXPECT_EQ(split_lines("x\n").size(), 2u);
}

TEST(Lines, BreaksAtTheEdgesOfTheText) {
  EXPECT_EQ(find_line_break("").len, 0u);
  EXPECT_EQ(find_line_break("abc").pos, std::string_view::npos);
  EXPECT_EQ(find_line_break("a\r").len, 1u);  // a "\r" at the very end is a whole break
  EXPECT_EQ(find_line_break("a\r\n", 2).pos, 2u);  // from inside "\r\n": the "\n" alone
  EXPECT_EQ(find_line_break("a\r\n", 2).len, 1u);
  EXPECT_EQ(find_line_break("a\nb", 9).len, 0u);  // from past the end
  EXPECT_EQ(line_break_at("a\r\nb", 1), 2u);
  EXPECT_EQ(line_break_at("a\r\nb", 2), 1u);
  EXPECT_EQ(line_break_at("a\r", 1), 1u);
  EXPECT_EQ(line_break_at("ab", 0), 0u);
  EXPECT_EQ(line_break_at("ab", 5), 0u);
  EXPECT_TRUE(ends_with_line_break("x\r"));
  EXPECT_TRUE(ends_with_line_break("x\n"));
  EXPECT_FALSE(ends_with_line_break(""));
  EXPECT_EQ(strip_line_break("x\n\r"), "x\n");  // "\n\r" is two breaks: only the last goes
  EXPECT_EQ(line_col_of_offset("ab\ncd", 99).line, 1);  // past the end clamps to the end
  EXPECT_EQ(line_col_of_offset("ab\ncd", 99).col, 2);
  EXPECT_EQ(offset_of_line_col("ab\ncd", 0, -4), 0u);   // a negative column is the line start
  EXPECT_EQ(line_start_offset("ab\ncd", 7), 5u);        // a line past the end: the end
}
