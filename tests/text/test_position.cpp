// Positions (text/position.h): UTF-16 / UTF-8 / UTF-32 code units to byte
// offsets and back, line endings, clamping past the end of a line and inside
// a character, invalid bytes as one unit each.
#include <gtest/gtest.h>

#include <string>

#include "text/position.h"

using namespace qf::text;

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

TEST(Position, LinesPastTheEndAndEncodingNames) {
  const std::string text = "ab\ncd";
  line_table lines(text);
  EXPECT_FALSE(offset_of(text, lines, 2, 0, position_encoding::utf8).has_value());
  EXPECT_EQ(clamp_line(lines, 9), 1u);
  EXPECT_EQ(character_of(text, lines, 9, 1, position_encoding::utf16), 1u);  // clamps to the last line
  EXPECT_EQ(lines.line_of(99), 1u);
  EXPECT_STREQ(encoding_name(position_encoding::utf8), "utf-8");
  EXPECT_STREQ(encoding_name(position_encoding::utf16), "utf-16");
  EXPECT_STREQ(encoding_name(position_encoding::utf32), "utf-32");
}

TEST(Position, LoneSurrogateBytesCountAsOneUnitEach) {
  // An encoded surrogate (ED A0 80) is not a character: three bytes, three units.
  const std::string text = "a\xED\xA0\x80z";
  EXPECT_EQ(count_units(text, position_encoding::utf16), 5u);
  EXPECT_EQ(count_units(text, position_encoding::utf32), 5u);
  EXPECT_EQ(bytes_for_units(text, 2, position_encoding::utf16), 2u);
  EXPECT_EQ(bytes_for_units(text, 2, position_encoding::utf8), 2u);  // invalid bytes are characters of their own
}
