// The cursor as post-processing reads it, built once per request.
//
// Runs first: the pipeline (or the remote source) makes it from the request's
// text and cursor before the trigger decision, and the three jobs of
// post-processing read it: the trigger (trigger.h: complete here at all?),
// the stop rules while decoding (stop_rules.h) and the cleanup of the final
// text (cleanup.h). It holds the cursor line around the cursor, a few of the
// following lines and the document's line ending; lines are text/lines.h
// lines ("\r\n", "\n" or a lone "\r"). Also here: the few line helpers the
// three jobs share.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace qf::server::completion {

// Text of the cursor line kept on each side of the cursor (and of each next
// line): enough for every rule of post-processing, and a bound on the copies
// a keystroke makes in a file with very long lines.
inline constexpr size_t k_context_line_bytes = 1024;

struct cursor_context {
  std::string line_before;  // cursor line text before the cursor (its last k_context_line_bytes)
  std::string line_after;   // cursor line text after the cursor (no line ending; its first k_context_line_bytes)
  std::vector<std::string> next_lines;  // following lines (no line endings, each cut likewise), a few
  int base_indent = 0;      // indentation width of the cursor line (tab = 4)
  std::string eol = "\n";  // the document's line ending (its first line break)
  bool crlf = false;        // eol == "\r\n"
  int64_t line = 0, col = 0;
};

cursor_context make_cursor_context(std::string_view text, int64_t line, int64_t col, size_t max_next = 8);

int indent_width(std::string_view line);  // leading whitespace width, tab = 4

// Shared by the jobs: a byte of a word (identifier characters, and any byte
// of a non-ASCII character), and whitespace trimmed off one or both ends.
bool is_word_byte(unsigned char c);
std::string_view trim_space(std::string_view s);
std::string_view rtrim_space(std::string_view s);

}  // namespace qf::server::completion
