// Helpers shared by the syntax tests: random LSP edits of a document.
#pragma once

#include <random>
#include <string>
#include <vector>

#include "indexing/document.h"
#include "text/position.h"
#include "syntax_samples.h"

namespace qf::test {

// A random byte offset of `text` on a UTF-8 character boundary.
inline std::size_t random_boundary(const std::string& text, std::mt19937& rng) {
  std::size_t off = std::uniform_int_distribution<std::size_t>(0, text.size())(rng);
  while (off > 0 && off < text.size() && (static_cast<unsigned char>(text[off]) & 0xC0) == 0x80) --off;
  return off;
}

inline index::text_range range_of(const index::document& d, std::size_t begin, std::size_t end,
                                  text::position_encoding enc) {
  const std::size_t l0 = d.lines.line_of(begin), l1 = d.lines.line_of(end);
  const auto c0 = text::character_of(d.text, d.lines, l0, begin - d.lines.line_start(l0), enc);
  const auto c1 = text::character_of(d.text, d.lines, l1, end - d.lines.line_start(l1), enc);
  return {static_cast<std::uint32_t>(l0), static_cast<std::uint32_t>(c0), static_cast<std::uint32_t>(l1),
          static_cast<std::uint32_t>(c1)};
}

// One random change: mostly inserting a fragment or deleting a short range,
// sometimes replacing a range; deletions win while the text is over `max_bytes`.
inline index::text_change random_change(const index::document& d, std::mt19937& rng, text::position_encoding enc,
                                        std::size_t max_bytes) {
  const auto& frags = code_fragments();
  const int kind = std::uniform_int_distribution<int>(0, 9)(rng);
  const bool shrink = d.text.size() > max_bytes;
  std::size_t begin = random_boundary(d.text, rng);
  std::size_t end = begin;
  std::string insert;
  if (shrink || kind < 4) {  // delete 1..24 bytes (snapped to a boundary)
    end = std::min(d.text.size(), begin + std::uniform_int_distribution<std::size_t>(1, 24)(rng));
    while (end < d.text.size() && (static_cast<unsigned char>(d.text[end]) & 0xC0) == 0x80) ++end;
  }
  if (!shrink && kind >= 2) {
    const int pieces = std::uniform_int_distribution<int>(1, 3)(rng);
    for (int i = 0; i < pieces; ++i) insert += frags[std::uniform_int_distribution<std::size_t>(0, frags.size() - 1)(rng)];
  }
  index::text_change c;
  c.range = range_of(d, begin, end, enc);
  c.text = insert;
  return c;
}

}  // namespace qf::test
