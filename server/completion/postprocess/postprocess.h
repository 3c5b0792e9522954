// Stop rules and post-processing of generated text.
//
// decide_trigger: whether to complete at all (no automatic completion in the
// middle of a word with code to its right, unless configured) and whether a
// multi-line completion is expected (explicit invocation, an empty line, or
// the end of a line that opens a block). stop_checker is fed the decoded text
// as it streams and says when to stop: single-line completions end at the
// first newline; multi-line ones end before a line whose indentation drops
// below the cursor line's (or returns to it after a block body, except for a
// closing bracket), or before a line repeating the next line of the document.
// At column 0 of a line with code (inserts_lines) the suggestion is whole
// lines put before that code: it keeps its last line break, is multi-line
// when invoked, and ends before a line repeating the code right of the
// cursor or dedenting below that code's indentation (or the suggestion's
// first line's, when less).
// Streaming also stops at degenerate repetition (syntax_rules.h).
// finalize repairs the model's text to valid UTF-8, trims, cuts degenerate
// repetition, drops a tail that duplicates the text right of the cursor
// (closing brackets and quotes included) or the following lines, applies the
// syntax rules of syntax_rules.h when the language has a grammar (else the
// bracket balance of multi-line suggestions), and converts to the document's
// line ending. Lines are indexing/lines.h lines
// ("\r\n", "\n" or a lone "\r") in the document and in generated text.
// make_candidate builds the edit: it replaces the word before the cursor so
// that a client's filter keeps the item visible while the user types on.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "server/completion/api/settings.h"
#include "server/completion/api/completion_provider.h"
#include "server/completion/postprocess/syntax_rules.h"

namespace qf::server::completion {

// Text of the cursor line kept on each side of the cursor (and of each next
// line): enough for every rule below, and a bound on the copies a keystroke
// makes in a file with very long lines.
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

struct trigger_decision {
  bool skip = false;          // do not complete here
  bool multi_line = false;
  bool block_opener = false;  // the cursor line ends with a block opener
  // The cursor is at column 0 of a line with code: what is inserted are whole
  // lines before that code, so a suggestion ends with a line break (the code
  // then starts the next line) and stops where the model writes that code.
  bool inserts_lines = false;
};

trigger_decision decide_trigger(const cursor_context& cx, bool explicit_trigger, const completion_settings& s);

int indent_width(std::string_view line);  // leading whitespace width, tab = 4

class stop_checker {
 public:
  stop_checker(const cursor_context& cx, const trigger_decision& d, bool stop_rules);
  // Appends decoded text; returns true when generation should stop.
  bool push(std::string_view text);
  bool stopped() const { return stopped_; }
  // True when the text so far ends at a line boundary (nothing pending on the
  // current line): a good place to stop when the deadline is near.
  bool at_line_end() const;
  // The text kept so far (cut at the stop point).
  std::string kept() const { return text_.substr(0, keep_); }
  // Cuts to the last complete line (multi-line) when stopping mid-line at the deadline.
  std::string kept_at_deadline() const;

 private:
  void scan();
  const cursor_context& cx_;
  trigger_decision d_;
  bool rules_;
  std::string text_;
  size_t keep_ = 0;
  bool stopped_ = false;
  bool after_cr_ = false;  // the last character pushed was '\r'
};

// `window`: the document around the cursor with its grammar (null: line
// rules only); `stats` (optional) receives what the syntax rules did.
std::string finalize(std::string text, const cursor_context& cx, const trigger_decision& d, bool stop_rules,
                     const syntax_window* window = nullptr, syntax_trim_stats* stats = nullptr);

// Labels are at most this many bytes (cut at a character boundary) plus " ..."
// for a multi-line candidate.
inline constexpr size_t k_label_bytes = 80;

completion_candidate make_candidate(const std::string& text, const cursor_context& cx);

}  // namespace qf::server::completion
