// UTF-8 (text/utf8.h): strict validity (RFC 3629), repair, decoding and
// encoding, truncation at character boundaries and the partial tail a
// streaming decoder holds back. One rule for all of them: a byte that does not
// start a valid sequence is one bad character (U+FFFD when repaired or decoded).
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "text/utf8.h"

using namespace qf::text;

TEST(Utf8, ValidityIsStrict) {
  EXPECT_TRUE(is_valid_utf8("plain ascii"));
  EXPECT_TRUE(is_valid_utf8("\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80"));
  EXPECT_FALSE(is_valid_utf8("\xFF"));
  EXPECT_FALSE(is_valid_utf8("\xC3"));              // cut off
  EXPECT_FALSE(is_valid_utf8("\xC0\xAF"));          // overlong
  EXPECT_FALSE(is_valid_utf8("\xED\xA0\x80"));      // a surrogate
  EXPECT_FALSE(is_valid_utf8("\xF4\x90\x80\x80"));  // above U+10FFFF
  EXPECT_EQ(first_invalid_utf8("ab\xE2\x82"), 2u);
}

TEST(Utf8, RepairReplacesEachBadByte) {
  EXPECT_EQ(repair_utf8("a\xFF" "b"), "a\xEF\xBF\xBD" "b");
  EXPECT_EQ(repair_utf8("\xE2\x82"), "\xEF\xBF\xBD\xEF\xBF\xBD");
  std::string s = "ok \xC3\xA9";
  EXPECT_FALSE(repair_utf8_in_place(s));
  EXPECT_EQ(s, "ok \xC3\xA9");
}

TEST(Utf8, TruncationNeverSplitsACharacter) {
  const std::string s = "ab\xE2\x82\xAC" "cd\xF0\x9F\x98\x80";  // a b EURO c d GRINNING
  for (std::size_t n = 0; n <= s.size() + 2; ++n) {
    const std::string_view p = utf8_prefix(s, n);
    EXPECT_LE(p.size(), n);
    EXPECT_TRUE(is_valid_utf8(p)) << n;
  }
  EXPECT_EQ(utf8_prefix(s, 3), "ab");
  EXPECT_EQ(utf8_prefix(s, 5), "ab\xE2\x82\xAC");
  EXPECT_EQ(utf8_prefix(s, 10), "ab\xE2\x82\xAC" "cd");
  EXPECT_EQ(utf8_shorten(s, 8), "ab\xE2\x82\xAC...");
  EXPECT_EQ(utf8_shorten(s, 7), "ab...");
  EXPECT_EQ(utf8_shorten("short", 8), "short");
  // Invalid bytes are characters of their own: cutting after one is fine.
  EXPECT_EQ(utf8_prefix("a\x80\x80\x80\x80" "b", 3), "a\x80\x80");
}

TEST(Utf8, PartialTailIsDropped) {
  EXPECT_EQ(without_partial_tail("ab\xE2\x82"), "ab");
  EXPECT_EQ(without_partial_tail("ab\xF0"), "ab");
  EXPECT_EQ(without_partial_tail("ab\xE2\x82\xAC"), "ab\xE2\x82\xAC");
  EXPECT_EQ(without_partial_tail("ab\xFF"), "ab\xFF");  // not a beginning: left for repair
  EXPECT_EQ(without_partial_tail(""), "");
}

TEST(Utf8, PartialTailIsWhatAStreamHoldsBack) {
  // The bytes a streaming decoder holds back: a valid beginning of a character.
  const auto held = [](std::string_view s) { return s.size() - without_partial_tail(s).size(); };
  EXPECT_EQ(held("ab\xF0\x9F"), 2u);
  EXPECT_EQ(held("ab\xF0\x9F\xA6\x99"), 0u);
  EXPECT_EQ(held("\xE2\x82"), 2u);
  EXPECT_EQ(held("\xC3"), 1u);
  EXPECT_EQ(held("abc"), 0u);
  // Bytes that can never become a character are not held: repair turns them
  // into U+FFFD at once.
  EXPECT_EQ(held("a\xC0"), 0u);      // C0, C1: only overlong forms
  EXPECT_EQ(held("a\xF5\x80"), 0u);  // F5..FF: nothing
  EXPECT_EQ(held("a\xED\xA0"), 0u);  // the start of a surrogate
  EXPECT_EQ(held("a\xE0\x80"), 0u);  // the start of an overlong form
  EXPECT_EQ(held("a\xF4\x90"), 0u);  // the start of a code point above U+10FFFF
  EXPECT_EQ(held("a\x80\x80\x80"), 0u);  // continuations without a lead
}

TEST(Utf8, SequenceLengthFollowsTheLeadAndSecondByteRanges) {
  EXPECT_EQ(utf8_sequence_length("a", 0), 1u);
  EXPECT_EQ(utf8_sequence_length("\xC3\xA9", 0), 2u);
  EXPECT_EQ(utf8_sequence_length("\xE2\x82\xAC", 0), 3u);
  EXPECT_EQ(utf8_sequence_length("\xF0\x9F\x98\x80", 0), 4u);
  EXPECT_EQ(utf8_sequence_length("\xC3\xA9", 1), 0u);  // a continuation byte starts nothing
  EXPECT_EQ(utf8_sequence_length("ab", 2), 0u);          // past the end
  // The edges of each range: the smallest and largest valid forms, and one past them.
  EXPECT_EQ(utf8_sequence_length("\xC2\x80", 0), 2u);          // U+0080
  EXPECT_EQ(utf8_sequence_length("\xC1\xBF", 0), 0u);          // overlong U+007F
  EXPECT_EQ(utf8_sequence_length("\xE0\xA0\x80", 0), 3u);      // U+0800
  EXPECT_EQ(utf8_sequence_length("\xE0\x9F\xBF", 0), 0u);      // overlong U+07FF
  EXPECT_EQ(utf8_sequence_length("\xED\x9F\xBF", 0), 3u);      // U+D7FF
  EXPECT_EQ(utf8_sequence_length("\xED\xA0\x80", 0), 0u);      // U+D800, a lone surrogate
  EXPECT_EQ(utf8_sequence_length("\xED\xBF\xBF", 0), 0u);      // U+DFFF
  EXPECT_EQ(utf8_sequence_length("\xEE\x80\x80", 0), 3u);      // U+E000
  EXPECT_EQ(utf8_sequence_length("\xF0\x90\x80\x80", 0), 4u);  // U+10000
  EXPECT_EQ(utf8_sequence_length("\xF0\x8F\xBF\xBF", 0), 0u);  // overlong U+FFFF
  EXPECT_EQ(utf8_sequence_length("\xF4\x8F\xBF\xBF", 0), 4u);  // U+10FFFF
  EXPECT_EQ(utf8_sequence_length("\xF4\x90\x80\x80", 0), 0u);  // U+110000
  EXPECT_EQ(utf8_sequence_length("\xF5\x80\x80\x80", 0), 0u);  // F5..FF never lead
  EXPECT_EQ(utf8_sequence_length("\xE2\x82", 0), 0u);          // cut off
  EXPECT_EQ(utf8_sequence_length("\xE2\x82x", 0), 0u);         // third byte not a continuation
}

TEST(Utf8, DecodeReadsEachBadByteAsOneReplacement) {
  const std::string s = "a\xC3\xA4\xFF\xE2\x82";  // a, U+00E4, a stray byte, a cut-off U+20AC
  std::size_t pos = 0;
  EXPECT_EQ(decode_utf8(s, pos), std::uint32_t{'a'});
  EXPECT_EQ(decode_utf8(s, pos), 0xE4u);
  EXPECT_EQ(decode_utf8(s, pos), replacement_code_point);
  EXPECT_EQ(pos, 4u);
  EXPECT_EQ(decode_utf8(s, pos), replacement_code_point);  // E2: the cut-off lead
  EXPECT_EQ(pos, 5u);
  EXPECT_EQ(decode_utf8(s, pos), replacement_code_point);  // 82: a stray continuation
  EXPECT_EQ(pos, s.size());
  EXPECT_FALSE(is_valid_utf8(s));
  EXPECT_EQ(repair_utf8("\xFFx"), "\xEF\xBF\xBDx");
}

TEST(Utf8, DecodeIsStrictLikeValidity) {
  // Overlong forms, surrogates and code points above U+10FFFF are not
  // characters: each of their bytes decodes to U+FFFD, exactly as repair_utf8
  // replaces it, so decoding raw text and decoding its repair agree.
  for (const std::string& s : {std::string("\xC0\x80"), std::string("\xE0\x80\xAF"), std::string("\xED\xA0\x80"),
                               std::string("\xED\xBF\xBF"), std::string("\xF0\x80\x80\xAF"),
                               std::string("\xF4\x90\x80\x80"), std::string("\xF7\xBF\xBF\xBF")}) {
    std::size_t pos = 0;
    std::vector<std::uint32_t> cps;
    while (pos < s.size()) cps.push_back(decode_utf8(s, pos));
    EXPECT_EQ(cps, std::vector<std::uint32_t>(s.size(), replacement_code_point)) << s.size();
    EXPECT_EQ(repair_utf8(s).size(), 3 * s.size());
  }
}

TEST(Utf8, DecodeAndAppendRoundTripEveryScalarValue) {
  std::string all;
  for (std::uint32_t cp = 0; cp <= 0x10FFFF; ++cp) {
    if (cp >= 0xD800 && cp <= 0xDFFF) continue;
    std::string one;
    append_utf8(one, cp);
    ASSERT_EQ(utf8_sequence_length(one, 0), one.size()) << cp;
    std::size_t pos = 0;
    ASSERT_EQ(decode_utf8(one, pos), cp);
    ASSERT_EQ(pos, one.size());
    if (cp % 97 == 0) all += one;
  }
  EXPECT_TRUE(is_valid_utf8(all));
  std::string four;
  append_utf8(four, 0x1F999);
  EXPECT_EQ(four, "\xF0\x9F\xA6\x99");
}
