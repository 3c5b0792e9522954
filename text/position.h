// Positions in text: lines, UTF-8 byte offsets and the code units that an LSP
// client counts in (UTF-16 by default, UTF-8 or UTF-32 when negotiated).
//
// Lines end at "\n", "\r\n" or "\r" (text/lines.h, the one definition of a
// line break); a line's end excludes its terminator. A character offset past the end
// of a line clamps to the line's end; one that falls inside a character (the
// second half of a UTF-16 surrogate pair, the middle of a UTF-8 sequence)
// clamps back to that character's start, so a conversion never splits a code
// point. Invalid UTF-8 bytes count as one unit each, so any byte string
// converts. A line number past the last line is an error for edits; callers
// that want clamping (cursor positions) use clamp_line().
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

namespace qf::text {

enum class position_encoding { utf8, utf16, utf32 };

const char* encoding_name(position_encoding e);  // "utf-8", "utf-16", "utf-32"

// Byte offsets of each line's start and end (excluding the terminator).
class line_table {
 public:
  line_table() : starts_{0}, ends_{0} {}
  explicit line_table(std::string_view text);
  std::size_t line_count() const { return starts_.size(); }
  std::size_t line_start(std::size_t line) const { return starts_[line]; }
  std::size_t line_end(std::size_t line) const { return ends_[line]; }
  // The line holding byte `offset` (offsets inside a terminator belong to the line it ends).
  std::size_t line_of(std::size_t offset) const;

 private:
  std::vector<std::size_t> starts_;
  std::vector<std::size_t> ends_;
};

// Length in `enc` code units of the UTF-8 text `s`.
std::size_t count_units(std::string_view s, position_encoding enc);

// Byte length of the longest prefix of `s` that is at most `units` code units,
// never splitting a character (clamps to s.size()).
std::size_t bytes_for_units(std::string_view s, std::size_t units, position_encoding enc);

// A (line, character) position in `enc` units to a byte offset in `text`.
// nullopt when `line` is past the last line.
std::optional<std::size_t> offset_of(std::string_view text, const line_table& lines, std::size_t line,
                                     std::size_t character, position_encoding enc);

// A (line, byte column) to a character in `enc` units; the column clamps to the line end.
std::size_t character_of(std::string_view text, const line_table& lines, std::size_t line, std::size_t byte_col,
                         position_encoding enc);

std::size_t clamp_line(const line_table& lines, std::size_t line);

}  // namespace qf::text
