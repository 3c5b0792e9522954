// Rows of long lines and the row window around the cursor (see the header).
#include "server/completion/prompt/text_rows.h"

#include <algorithm>

#include "text/lines.h"

namespace qf::server::completion {
namespace {

constexpr std::size_t k_lookback = k_max_row_bytes - k_row_bytes;

bool is_break_after(char c) { return c == ';' || c == ',' || c == ')' || c == ']' || c == '}'; }

// The cut for the nominal offset `p` (begin < p < content_end): see the header.
std::size_t cut_near(std::string_view text, std::size_t begin, std::size_t p) {
  const std::size_t lowest = std::max(begin + 1, p - k_lookback);
  for (std::size_t q = p; q >= lowest; --q) {
    if (text[q] == ' ' || text[q] == '\t' || is_break_after(text[q - 1])) return q;
    if (q == lowest) break;
  }
  std::size_t q = p;
  while (q > p - 3 && (static_cast<unsigned char>(text[q]) & 0xC0) == 0x80) --q;
  return q;
}

// Start of the line that ends just before `line_begin` (line_begin > 0): skip
// that line's terminator ("\r\n", "\n" or a lone "\r", index/lines.h), then
// look back for the terminator before it.
std::size_t previous_line_begin(std::string_view text, std::size_t line_begin) {
  std::size_t i = line_begin - 1;  // the last byte of the previous line's terminator
  if (text[i] == '\n' && i > 0 && text[i - 1] == '\r') --i;
  while (i > 0) {
    if (text::is_line_break_char(text[i - 1])) return i;
    --i;
  }
  return 0;
}

}  // namespace

line_rows line_rows::at(std::string_view text, std::size_t begin) {
  line_rows lr;
  lr.text = text;
  lr.begin = begin;
  const text::line_break br = text::find_line_break(text, begin);
  if (br.len > 0) {
    lr.has_newline = true;
    lr.content_end = br.pos;
    lr.end = br.pos + br.len;
  } else {
    lr.end = lr.content_end = text.size();
  }
  return lr;
}

std::int64_t line_rows::count() const {
  const std::size_t len = content_end - begin;
  return len <= k_row_bytes ? 1 : 1 + static_cast<std::int64_t>((len - 1) / k_row_bytes);
}

std::size_t line_rows::row_begin(std::int64_t i) const {
  if (i <= 0) return begin;
  return cut_near(text, begin, begin + static_cast<std::size_t>(i) * k_row_bytes);
}

std::int64_t line_rows::row_of(std::size_t off) const {
  const std::int64_t n = count();
  if (off >= content_end) return n - 1;
  const std::int64_t i = static_cast<std::int64_t>((off - begin) / k_row_bytes);
  return i + 1 < n && row_begin(i + 1) <= off ? i + 1 : i;
}

std::size_t row_window::offset_of_row(std::int64_t r) const {
  if (r == end_row()) {
    const std::string_view last = rows.back();
    return static_cast<std::size_t>(last.data() - text.data()) + last.size();
  }
  return static_cast<std::size_t>(row(r).data() - text.data());
}

row_window rows_around(std::string_view text, std::int64_t line, std::int64_t col, std::int64_t before,
                       std::int64_t after) {
  row_window w;
  w.text = text;
  // The cursor's line, counting the rows in front of it.
  std::size_t begin = 0;
  std::int64_t row_base = 0;
  std::int64_t l = 0;
  for (; l < line; ++l) {
    const line_rows lr = line_rows::at(text, begin);
    if (!lr.has_newline) break;  // no more lines: clamp to this one
    row_base += lr.count();
    begin = lr.end;
  }
  w.cursor_line = l;
  const line_rows cur = line_rows::at(text, begin);
  w.cursor = begin + std::min<std::size_t>(static_cast<std::size_t>(std::max<std::int64_t>(col, 0)),
                                           cur.content_end - begin);
  const std::int64_t piece = cur.row_of(w.cursor);
  w.cursor_row = row_base + piece;
  w.cursor_col = static_cast<std::int64_t>(w.cursor - cur.row_begin(piece));

  // Rows in front of the cursor row, nearest first.
  std::vector<std::string_view> back;
  {
    line_rows lr = cur;
    std::int64_t i = piece - 1;
    while (static_cast<std::int64_t>(back.size()) < before) {
      if (i < 0) {
        if (lr.begin == 0) break;
        lr = line_rows::at(text, previous_line_begin(text, lr.begin));
        i = lr.count() - 1;
      }
      back.push_back(lr.row(i--));
    }
  }
  w.first_row = w.cursor_row - static_cast<std::int64_t>(back.size());
  w.rows.assign(back.rbegin(), back.rend());
  w.rows.push_back(cur.row(piece));
  // Rows behind it (the empty last line after a final line break is a row too).
  {
    line_rows lr = cur;
    std::int64_t i = piece + 1;
    std::int64_t taken = 0;
    while (taken < after) {
      if (i < lr.count()) {
        w.rows.push_back(lr.row(i++));
        ++taken;
        continue;
      }
      if (!lr.has_newline) break;
      lr = line_rows::at(text, lr.end);
      i = 0;
    }
    w.at_document_end = i >= lr.count() && !lr.has_newline;
  }
  return w;
}

}  // namespace qf::server::completion
