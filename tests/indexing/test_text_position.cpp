// UTF-16 / UTF-8 / UTF-32 position conversion, line endings and clamping.
#include <gtest/gtest.h>

#include "indexing/document.h"
#include "indexing/text_position.h"

using namespace qf::index;

namespace {

std::size_t off(std::string_view text, std::size_t line, std::size_t ch, position_encoding enc) {
  line_table lines(text);
  auto o = offset_of(text, lines, line, ch, enc);
  EXPECT_TRUE(o.has_value());
  return o.value_or(9999);
}

}  // namespace

TEST(LineTable, SplitsOnLfCrLfAndCr) {
  line_table t("a\nbb\r\nccc\rd");
  ASSERT_EQ(t.line_count(), 4u);
  EXPECT_EQ(t.line_start(1), 2u);
  EXPECT_EQ(t.line_end(1), 4u);
  EXPECT_EQ(t.line_start(2), 6u);
  EXPECT_EQ(t.line_end(2), 9u);
  EXPECT_EQ(t.line_start(3), 10u);
  EXPECT_EQ(t.line_end(3), 11u);
  EXPECT_EQ(t.line_of(5), 1u);  // inside "\r\n"
  EXPECT_EQ(line_table("x\n").line_count(), 2u);
  EXPECT_EQ(line_table("").line_count(), 1u);
}

TEST(Position, AstralCharacterIsTwoUtf16Units) {
  const std::string text = "a\xF0\x9F\x98\x80" "b";  // a😀b
  EXPECT_EQ(off(text, 0, 1, position_encoding::utf16), 1u);
  EXPECT_EQ(off(text, 0, 3, position_encoding::utf16), 5u);   // after the emoji
  EXPECT_EQ(off(text, 0, 4, position_encoding::utf16), 6u);
  EXPECT_EQ(off(text, 0, 2, position_encoding::utf16), 1u);   // inside the surrogate pair: clamps back
  EXPECT_EQ(off(text, 0, 2, position_encoding::utf32), 5u);
  EXPECT_EQ(off(text, 0, 5, position_encoding::utf8), 5u);
  EXPECT_EQ(off(text, 0, 3, position_encoding::utf8), 1u);    // inside the UTF-8 sequence: clamps back
  line_table lines(text);
  EXPECT_EQ(character_of(text, lines, 0, 5, position_encoding::utf16), 3u);
  EXPECT_EQ(character_of(text, lines, 0, 5, position_encoding::utf32), 2u);
  EXPECT_EQ(character_of(text, lines, 0, 3, position_encoding::utf16), 1u);  // mid-sequence byte column
}

TEST(Position, BmpMultibyteIsOneUtf16Unit) {
  const std::string text = "\xC3\xA9t\xC3\xA9";  // été
  EXPECT_EQ(off(text, 0, 1, position_encoding::utf16), 2u);
  EXPECT_EQ(off(text, 0, 2, position_encoding::utf16), 3u);
  EXPECT_EQ(count_units(text, position_encoding::utf16), 3u);
  EXPECT_EQ(count_units(text, position_encoding::utf8), 5u);
}

TEST(Position, PastEndOfLineClampsToLineEndBeforeTerminator) {
  const std::string text = "ab\r\ncd\nef";
  EXPECT_EQ(off(text, 0, 99, position_encoding::utf16), 2u);  // before "\r\n"
  EXPECT_EQ(off(text, 1, 99, position_encoding::utf16), 6u);
  EXPECT_EQ(off(text, 2, 99, position_encoding::utf16), 9u);
  line_table lines(text);
  EXPECT_FALSE(offset_of(text, lines, 3, 0, position_encoding::utf16).has_value());
  EXPECT_EQ(character_of(text, lines, 0, 50, position_encoding::utf16), 2u);
}

TEST(Position, InvalidUtf8BytesCountAsOneUnit) {
  const std::string text = "a\xFF\xC3z";  // stray byte, truncated sequence
  EXPECT_EQ(count_units(text, position_encoding::utf16), 4u);
  EXPECT_EQ(off(text, 0, 3, position_encoding::utf16), 3u);
}

TEST(Document, IncrementalEditsInUtf16) {
  document d("file:///x", "c", 1, "int \xF0\x9F\x98\x80 = 1;\r\nnext");
  std::string err;
  // Replace the emoji (UTF-16 columns 4..6) with "x".
  ASSERT_TRUE(d.apply({{text_range{0, 4, 0, 6}, "x"}}, position_encoding::utf16, &err)) << err;
  EXPECT_EQ(d.text, "int x = 1;\r\nnext");
  // Join the lines by deleting from past the end of line 0 to the start of line 1.
  ASSERT_TRUE(d.apply({{text_range{0, 100, 1, 0}, " "}}, position_encoding::utf16, &err)) << err;
  EXPECT_EQ(d.text, "int x = 1; next");
  ASSERT_TRUE(d.apply({{std::nullopt, "fresh"}}, position_encoding::utf16, &err));
  EXPECT_EQ(d.text, "fresh");
  EXPECT_EQ(d.lines.line_count(), 1u);
}

TEST(Document, MalformedBatchLeavesTextUnchanged) {
  document d("file:///x", "c", 1, "one\ntwo\n");
  std::string err;
  // The first edit is fine, the second starts after its end: nothing is applied.
  EXPECT_FALSE(d.apply({{text_range{0, 0, 0, 0}, "X"}, {text_range{1, 2, 1, 1}, "Y"}}, position_encoding::utf16, &err));
  EXPECT_NE(err.find("change 1"), std::string::npos) << err;
  EXPECT_EQ(d.text, "one\ntwo\n");
  EXPECT_FALSE(d.apply({{text_range{7, 0, 7, 0}, "Z"}}, position_encoding::utf16, &err));
  EXPECT_NE(err.find("past the last line"), std::string::npos) << err;
  EXPECT_EQ(d.text, "one\ntwo\n");
  EXPECT_EQ(d.lines.line_count(), 3u);
}
