// The fast paths of the code-unit conversions (eight ASCII bytes at a time;
// O(1) UTF-8 clamping) give exactly what a walk character by character gives,
// on random byte strings with valid, truncated and invalid UTF-8 in them.
#include <gtest/gtest.h>

#include <random>
#include <string>

#include "text/position.h"

using namespace qf::text;

namespace {

// The reference: one character at a time (invalid or truncated sequences are one byte, one unit).
std::size_t char_len(std::string_view s, std::size_t i) {
  const unsigned char c = static_cast<unsigned char>(s[i]);
  std::size_t len = 1;
  if (c >= 0xC2 && c <= 0xDF) len = 2;
  else if (c >= 0xE0 && c <= 0xEF) len = 3;
  else if (c >= 0xF0 && c <= 0xF4) len = 4;
  if (len > 1) {
    if (i + len > s.size()) return 1;
    for (std::size_t k = 1; k < len; ++k)
      if ((static_cast<unsigned char>(s[i + k]) & 0xC0) != 0x80) return 1;
  }
  return len;
}
std::size_t units_of(std::size_t len, position_encoding enc) {
  if (enc == position_encoding::utf8) return len;
  if (enc == position_encoding::utf16) return len == 4 ? 2 : 1;
  return 1;
}
std::size_t ref_count(std::string_view s, position_encoding enc) {
  std::size_t n = 0;
  for (std::size_t i = 0; i < s.size(); i += char_len(s, i)) n += units_of(char_len(s, i), enc);
  return n;
}
std::size_t ref_bytes_for_units(std::string_view s, std::size_t units, position_encoding enc) {
  std::size_t i = 0, used = 0;
  while (i < s.size()) {
    const std::size_t len = char_len(s, i);
    if (used + units_of(len, enc) > units) break;
    used += units_of(len, enc);
    i += len;
  }
  return i;
}

std::string random_text(std::mt19937& rng, std::size_t n) {
  static const char* pieces[] = {"a", "bcdefgh", "        ", "\xc3\xa9", "\xe2\x82\xac", "\xf0\x9f\x98\x80",
                                 "\x80", "\xc3", "\xe2\x82", "\xf0\x9f", "\xff", "xyz0123456789"};
  std::string s;
  while (s.size() < n) s += pieces[rng() % (sizeof pieces / sizeof *pieces)];
  return s;
}

}  // namespace

TEST(position_equivalence, fast_paths_match_the_character_walk) {
  std::mt19937 rng(7);
  for (int round = 0; round < 300; ++round) {
    const std::string s = random_text(rng, 1 + rng() % 80);
    for (auto enc : {position_encoding::utf8, position_encoding::utf16, position_encoding::utf32}) {
      ASSERT_EQ(count_units(s, enc), ref_count(s, enc)) << round;
      for (std::size_t u = 0; u <= s.size() + 2; ++u)
        ASSERT_EQ(bytes_for_units(s, u, enc), ref_bytes_for_units(s, u, enc))
            << "round " << round << " units " << u << " enc " << encoding_name(enc);
    }
  }
}
