// Line breaks: the one definition every part of quickfill uses.
//
// A line ends at "\r\n", "\n" or a lone "\r" (the three terminators the LSP
// specification allows). The document store's line table, position
// conversion, text edits and the completion pipeline (cursor context, prompt
// layout, post-processing, type-through) all split text with these functions,
// so a line number means the same line everywhere.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

namespace qf::text {

struct line_break {
  std::size_t pos;  // where the terminator starts (npos when there is none)
  std::size_t len;  // 1 or 2 bytes; 0 when there is none
};

// The first line break at or after `from`.
line_break find_line_break(std::string_view s, std::size_t from = 0);

// Length of the line break starting at s[i] (0 when none starts there).
std::size_t line_break_at(std::string_view s, std::size_t i);

inline bool is_line_break_char(char c) { return c == '\n' || c == '\r'; }
bool ends_with_line_break(std::string_view s);

// Splits text into lines, each keeping its terminator (the last one has
// none; text that ends with a break gives a last, empty line).
std::vector<std::string_view> split_lines(std::string_view text);

// A line without its terminator.
std::string_view strip_line_break(std::string_view line);

// Byte offset of the start of line `line` (text.size() when past the end).
std::size_t line_start_offset(std::string_view text, std::int64_t line);

// Byte offset of (line, byte column): the column clamps to the line's end
// (before its terminator), a line past the end to the end of the text.
std::size_t offset_of_line_col(std::string_view text, std::int64_t line, std::int64_t col);

// The (line, byte column) of a byte offset (clamped to the text).
struct line_col {
  std::int64_t line = 0;
  std::int64_t col = 0;
};
line_col line_col_of_offset(std::string_view text, std::size_t offset);

// The document's own line ending: its first terminator, "\n" when it has none.
std::string_view first_line_ending(std::string_view text);

}  // namespace qf::text
