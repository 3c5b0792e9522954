// Line breaks (see lines.h).
#include "text/lines.h"

#include <algorithm>
#include <cstring>

namespace qf::text {

line_break find_line_break(std::string_view s, std::size_t from) {
  // Two memchr passes (vectorised in libc): the first '\n', then a '\r' in
  // front of it. Long lines (minified code) cost a scan, not a byte loop.
  if (from >= s.size()) return {std::string_view::npos, 0};
  const char* begin = s.data() + from;
  const char* end = s.data() + s.size();
  const char* nl = static_cast<const char*>(std::memchr(begin, '\n', static_cast<std::size_t>(end - begin)));
  const char* stop = nl ? nl : end;
  const char* cr = static_cast<const char*>(std::memchr(begin, '\r', static_cast<std::size_t>(stop - begin)));
  if (cr) {
    const std::size_t i = static_cast<std::size_t>(cr - s.data());
    return {i, cr + 1 == nl ? 2u : 1u};
  }
  if (nl) return {static_cast<std::size_t>(nl - s.data()), 1};
  return {std::string_view::npos, 0};
}

std::size_t line_break_at(std::string_view s, std::size_t i) {
  if (i >= s.size()) return 0;
  if (s[i] == '\n') return 1;
  if (s[i] == '\r') return i + 1 < s.size() && s[i + 1] == '\n' ? 2 : 1;
  return 0;
}

bool ends_with_line_break(std::string_view s) { return !s.empty() && is_line_break_char(s.back()); }

std::vector<std::string_view> split_lines(std::string_view text) {
  std::vector<std::string_view> lines;
  std::size_t start = 0;
  for (;;) {
    const line_break b = find_line_break(text, start);
    if (b.len == 0) {
      lines.push_back(text.substr(start));
      return lines;
    }
    lines.push_back(text.substr(start, b.pos + b.len - start));
    start = b.pos + b.len;
  }
}

std::string_view strip_line_break(std::string_view line) {
  if (!line.empty() && line.back() == '\n') line.remove_suffix(1);
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  return line;
}

std::size_t line_start_offset(std::string_view text, std::int64_t line) {
  std::size_t off = 0;
  for (std::int64_t l = 0; l < line; ++l) {
    const line_break b = find_line_break(text, off);
    if (b.len == 0) return text.size();
    off = b.pos + b.len;
  }
  return off;
}

std::size_t offset_of_line_col(std::string_view text, std::int64_t line, std::int64_t col) {
  std::size_t off = 0;
  for (std::int64_t l = 0; l < line; ++l) {
    const line_break b = find_line_break(text, off);
    if (b.len == 0) return text.size();
    off = b.pos + b.len;
  }
  const line_break b = find_line_break(text, off);
  const std::size_t end = b.len == 0 ? text.size() : b.pos;
  return std::min(off + static_cast<std::size_t>(std::max<std::int64_t>(col, 0)), end);
}

line_col line_col_of_offset(std::string_view text, std::size_t offset) {
  offset = std::min(offset, text.size());
  line_col lc;
  std::size_t start = 0;
  for (;;) {
    const line_break b = find_line_break(text, start);
    // An offset inside a "\r\n" belongs to the line it ends.
    if (b.len == 0 || b.pos + b.len > offset) break;
    ++lc.line;
    start = b.pos + b.len;
  }
  lc.col = static_cast<std::int64_t>(offset - start);
  return lc;
}

std::string_view first_line_ending(std::string_view text) {
  const line_break b = find_line_break(text);
  return b.len == 0 ? std::string_view("\n") : text.substr(b.pos, b.len);
}

}  // namespace qf::text
