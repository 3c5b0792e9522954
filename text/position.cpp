// Line tables and code-unit conversions (see position.h).
#include "text/position.h"

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "text/lines.h"
#include "text/utf8.h"

namespace qf::text {

namespace {

// Length of the UTF-8 sequence starting at s[i] and how many code units it
// is in `enc`. Invalid or truncated sequences are one byte, one unit.
struct char_info {
  std::size_t bytes;
  std::size_t units;
};

char_info next_char(std::string_view s, std::size_t i, position_encoding enc) {
  std::size_t len = utf8_sequence_length(s, i);
  if (len == 0) return {1, 1};
  switch (enc) {
    case position_encoding::utf8: return {len, len};
    case position_encoding::utf16: return {len, len == 4 ? 2u : 1u};
    case position_encoding::utf32: return {len, 1};
  }
  return {len, 1};
}

// Whether the 8 bytes at s[i] are all ASCII (one byte, one unit each in every encoding).
bool ascii8(std::string_view s, std::size_t i) {
  std::uint64_t w;
  std::memcpy(&w, s.data() + i, 8);
  return (w & 0x8080808080808080ull) == 0;
}

}  // namespace

const char* encoding_name(position_encoding e) {
  switch (e) {
    case position_encoding::utf8: return "utf-8";
    case position_encoding::utf16: return "utf-16";
    case position_encoding::utf32: return "utf-32";
  }
  return "utf-16";
}

line_table::line_table(std::string_view text) {
  starts_.push_back(0);
  for (line_break b = find_line_break(text); b.len != 0; b = find_line_break(text, b.pos + b.len)) {
    ends_.push_back(b.pos);
    starts_.push_back(b.pos + b.len);
  }
  ends_.push_back(text.size());
}

std::size_t line_table::line_of(std::size_t offset) const {
  auto it = std::upper_bound(starts_.begin(), starts_.end(), offset);
  return static_cast<std::size_t>(it - starts_.begin()) - 1;
}

std::size_t count_units(std::string_view s, position_encoding enc) {
  if (enc == position_encoding::utf8) return s.size();
  std::size_t units = 0;
  for (std::size_t i = 0; i < s.size();) {
    if (i + 8 <= s.size() && ascii8(s, i)) {
      units += 8;
      i += 8;
      continue;
    }
    char_info ci = next_char(s, i, enc);
    units += ci.units;
    i += ci.bytes;
  }
  return units;
}

std::size_t bytes_for_units(std::string_view s, std::size_t units, position_encoding enc) {
  if (enc == position_encoding::utf8) return utf8_floor(s, units);  // O(1)
  std::size_t i = 0;
  std::size_t used = 0;
  while (i < s.size()) {
    if (i + 8 <= s.size() && used + 8 <= units && ascii8(s, i)) {
      used += 8;
      i += 8;
      continue;
    }
    char_info ci = next_char(s, i, enc);
    if (used + ci.units > units) break;
    used += ci.units;
    i += ci.bytes;
  }
  return i;
}

std::optional<std::size_t> offset_of(std::string_view text, const line_table& lines, std::size_t line,
                                     std::size_t character, position_encoding enc) {
  if (line >= lines.line_count()) return std::nullopt;
  const std::size_t begin = lines.line_start(line);
  const std::size_t end = lines.line_end(line);
  return begin + bytes_for_units(text.substr(begin, end - begin), character, enc);
}

std::size_t character_of(std::string_view text, const line_table& lines, std::size_t line, std::size_t byte_col,
                         position_encoding enc) {
  line = clamp_line(lines, line);
  const std::size_t begin = lines.line_start(line);
  const std::string_view line_text = text.substr(begin, lines.line_end(line) - begin);
  // Clamp to the line end and back to the start of a split character.
  const std::size_t bytes = bytes_for_units(line_text, byte_col, position_encoding::utf8);
  return count_units(line_text.substr(0, bytes), enc);
}

std::size_t clamp_line(const line_table& lines, std::size_t line) {
  return std::min(line, lines.line_count() - 1);
}

}  // namespace qf::text
