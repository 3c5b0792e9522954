// The cursor context and the line helpers of post-processing (see the header).
#include "server/completion/postprocess/cursor_context.h"

#include <algorithm>
#include <cctype>

#include "text/lines.h"
#include "text/utf8.h"

namespace qf::server::completion {
namespace {

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\f' || c == '\v'; }

// The first / last `n` bytes of `s`, not splitting a UTF-8 character.
std::string_view head_of(std::string_view s, size_t n) { return text::utf8_prefix(s, n); }
std::string_view tail_of(std::string_view s, size_t n) {
  if (s.size() <= n) return s;
  size_t from = s.size() - n;
  while (from < s.size() && (static_cast<unsigned char>(s[from]) & 0xC0) == 0x80) ++from;
  return s.substr(from);
}

}  // namespace

bool is_word_byte(unsigned char c) { return c == '_' || c >= 0x80 || std::isalnum(c); }

std::string_view trim_space(std::string_view s) {
  while (!s.empty() && is_space(s.front())) s.remove_prefix(1);
  return rtrim_space(s);
}

std::string_view rtrim_space(std::string_view s) {
  while (!s.empty() && is_space(s.back())) s.remove_suffix(1);
  return s;
}

int indent_width(std::string_view line) {
  int w = 0;
  for (char c : line) {
    if (c == ' ') ++w;
    else if (c == '\t') w += 4;
    else break;
  }
  return w;
}

cursor_context make_cursor_context(std::string_view text, int64_t line, int64_t col, size_t max_next) {
  cursor_context cx;
  cx.line = line;
  cx.eol = std::string(text::first_line_ending(text));
  cx.crlf = cx.eol == "\r\n";
  const size_t off = text::line_start_offset(text, line);
  const text::line_break br = text::find_line_break(text, off);
  const size_t end = br.len == 0 ? text.size() : br.pos;
  std::string_view cur = text.substr(off, end - off);
  size_t c = std::min<size_t>(static_cast<size_t>(std::max<int64_t>(col, 0)), cur.size());
  cx.col = static_cast<int64_t>(c);
  cx.line_before = std::string(tail_of(cur.substr(0, c), k_context_line_bytes));
  cx.line_after = std::string(head_of(cur.substr(c), k_context_line_bytes));
  cx.base_indent = indent_width(head_of(cur, k_context_line_bytes));
  size_t pos = br.len == 0 ? text.size() : br.pos + br.len;
  while (pos < text.size() && cx.next_lines.size() < max_next) {
    const text::line_break b = text::find_line_break(text, pos);
    const size_t e = b.len == 0 ? text.size() : b.pos;
    cx.next_lines.emplace_back(head_of(text.substr(pos, e - pos), k_context_line_bytes));
    pos = b.len == 0 ? text.size() : b.pos + b.len;
  }
  return cx;
}

}  // namespace qf::server::completion
