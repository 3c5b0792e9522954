// Unicode helpers for the tokenizers: per-code-point general-category class and
// White_Space flag (from a generated range table, unicode_data.cpp), SentencePiece's
// lead-byte symbol length, and the GPT-2 byte <-> printable code point mapping used by
// byte-level BPE vocabularies. UTF-8 validity, repair and decoding are text/utf8.h's
// (strict, RFC 3629: an invalid byte becomes U+FFFD and decoding resumes at the next
// byte).
//
// Lookups are O(1) for the Basic Multilingual Plane (a flat table built once from the
// ranges) and a binary search above it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace qf::infer::unicode {

// General-category class (first letter of the Unicode category).
enum class cat : uint8_t { other = 0, letter = 1, number = 2, punct = 3, symbol = 4, mark = 5, separator = 6 };

struct cpt_flags {
  uint8_t bits = 0;
  static constexpr uint8_t k_whitespace = 0x10;
  cat category() const { return static_cast<cat>(bits & 0x0F); }
  bool is_whitespace() const { return (bits & k_whitespace) != 0; }
  bool is_letter() const { return category() == cat::letter; }
  bool is_number() const { return category() == cat::number; }
  bool is_punct() const { return category() == cat::punct; }
  bool is_mark() const { return category() == cat::mark; }
};

cpt_flags flags(uint32_t cp);
const char* table_version();  // Unicode version the table was generated from

// Length of the UTF-8 sequence a lead byte announces (1 for continuation/invalid bytes),
// the rule SentencePiece-style symbol splitting uses.
inline size_t utf8_seq_len(uint8_t lead) {
  static constexpr uint8_t k_len[16] = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 3, 4};
  return k_len[lead >> 4];
}

// GPT-2 byte-level mapping: every byte to a printable code point (as UTF-8), and back.
const std::string& byte_to_utf8(uint8_t b);
int utf8_cpt_to_byte(uint32_t cp);  // -1 when cp is not in the mapping

namespace detail {
struct range_entry {
  uint32_t first;
  uint8_t flags;
};
extern const range_entry k_ranges[];
extern const size_t k_n_ranges;
extern const char k_unicode_version[];
}  // namespace detail

}  // namespace qf::infer::unicode
