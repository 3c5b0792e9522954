// Rows: the units a prompt is assembled from, and the window of them around
// the cursor that one request looks at.
//
// A row is a line of the document with its line break (\r\n, \n or a lone \r,
// text/lines.h) -- except that a line longer
// than k_row_bytes is cut into several rows of about k_row_bytes each, at most
// k_max_row_bytes plus the line's terminator (a 10 MiB line of minified code
// becomes rows of a few hundred bytes), so that a prompt never has to
// tokenize, cache or compare a whole long line. Cuts sit near fixed offsets of
// the line (multiples of k_row_bytes from its start), moved back by at most
// k_row_bytes / 4 to just before a space or just after `;`, `,` or a closing
// bracket, else to a UTF-8 character boundary; a cut therefore depends only on
// the bytes of its line up to its nominal offset, so typing at the end of a
// long line leaves the rows before it (and their cached tokens and KV)
// unchanged. Short lines are one row each, so rows and lines agree for
// ordinary code.
//
// rows_around() finds the cursor's line (a scan from the start, the one
// pass over the text in front of the cursor that a request makes) and
// materialises only `before` rows in front of the cursor row and `after`
// rows behind it: the work of a keystroke is bounded by the window, not by
// the document. Row numbers are absolute (counted from the document start), so
// a prompt layout made at one keystroke can be checked at the next.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

namespace qf::server::completion {

inline constexpr std::size_t k_row_bytes = 256;
inline constexpr std::size_t k_max_row_bytes = k_row_bytes + k_row_bytes / 4;

// The rows of one line of `text`: [begin, end) with its terminator, whose
// content (without its line break) ends at content_end.
struct line_rows {
  std::string_view text;
  std::size_t begin = 0, content_end = 0, end = 0;
  bool has_newline = false;  // false for the document's last line

  static line_rows at(std::string_view text, std::size_t begin);  // the line starting at `begin`
  std::int64_t count() const;
  std::size_t row_begin(std::int64_t i) const;
  std::size_t row_end(std::int64_t i) const { return i + 1 < count() ? row_begin(i + 1) : end; }
  std::string_view row(std::int64_t i) const { return text.substr(row_begin(i), row_end(i) - row_begin(i)); }
  // The row holding byte `off` (begin <= off <= end); offsets in the terminator belong to the last row.
  std::int64_t row_of(std::size_t off) const;
};

struct row_window {
  std::string_view text;        // the whole document
  std::size_t cursor = 0;       // byte offset of the cursor (clamped into its line)
  std::int64_t cursor_row = 0;  // absolute row of the cursor
  std::int64_t cursor_col = 0;  // byte column of the cursor in its row
  std::int64_t cursor_line = 0; // the (clamped) line of the cursor
  std::int64_t first_row = 0;   // absolute row of rows.front()
  bool at_document_end = false; // rows.back() is the document's last row
  std::vector<std::string_view> rows;

  std::int64_t end_row() const { return first_row + static_cast<std::int64_t>(rows.size()); }
  bool contains(std::int64_t r) const { return r >= first_row && r < end_row(); }
  std::string_view row(std::int64_t r) const { return rows[static_cast<std::size_t>(r - first_row)]; }
  // Byte offset of row r's start; r may be end_row() (the offset after the last row).
  std::size_t offset_of_row(std::int64_t r) const;
};

// The window around (line, byte column) -- a line past the end clamps to the
// last line, a column past its line's end to that end -- holding up to
// `before` rows in front of the cursor row, the cursor row and up to `after`
// rows behind it.
row_window rows_around(std::string_view text, std::int64_t line, std::int64_t col, std::int64_t before,
                       std::int64_t after);

// Calls fn(row) for the rows of `text` in order until fn returns false.
// (A document ending in a line break ends with an empty row, as it has an empty last line.)
template <class Fn>
void for_each_row(std::string_view text, Fn&& fn) {
  std::size_t begin = 0;
  for (;;) {
    const line_rows lr = line_rows::at(text, begin);
    for (std::int64_t i = 0; i < lr.count(); ++i)
      if (!fn(lr.row(i))) return;
    if (!lr.has_newline) return;
    begin = lr.end;
  }
}

}  // namespace qf::server::completion
