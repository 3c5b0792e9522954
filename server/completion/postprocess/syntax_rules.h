// Post-processing rules beyond the line rules: degenerate repetition,
// closing brackets and quotes, and (for languages with a grammar) syntax.
//
// cut_repetition (every language): a run of one unit of up to 32 characters
// repeated at least 4 times over at least 32 characters ("0x0000...", "a, a,
// a, ..."; not whitespace) keeps one unit; a group of up to 8 lines repeated
// 3 times in a row keeps its first copy. repetition_start finds the same
// runs at the end of streaming text, so generation can stop there.
//
// drop_duplicate_closers (every language): closing brackets and quotes at the
// end of a suggestion that close nothing it opened and that the text right of
// the cursor already has (cursor before ")" and the suggestion ends in ")")
// are dropped. balance_brackets (languages without a grammar, multi-line
// suggestions): a suggestion that leaves brackets open that the text after
// the cursor does not close is cut back to its last line end at which
// nothing it opened is open (or to its first line).
//
// syntax_trim (languages with a grammar) parses a window of the document
// around the cursor (from a line at column 0 at most k_window_lines_before
// lines up, to one at most k_window_lines_after lines down, at most k_window_bytes
// before and k_window_bytes_after after the cursor) without and with the suggestion inserted, within a budget
// of CPU time, and
//  * cuts the suggestion to its longest prefix, at a line end or else at a
//    token boundary of its first line, that adds no error node (no more
//    error nodes than the document without it, and no more bytes under them
//    than the suggestion's own length adds);
//  * ends a multi-line suggestion where the construct enclosing the cursor
//    ends (the outermost node that began before the cursor and ends inside
//    the suggestion), when the suggestion runs on past it onto further lines.
// When a parse does not finish in the budget the suggestion is returned as
// the rules before left it (finalize then applies the bracket balance, as
// for a language without a grammar).
#pragma once

#include <chrono>
#include <cstddef>
#include <string>
#include <string_view>

#include "indexing/syntax_language.h"

namespace qf::server::completion {

inline constexpr std::size_t k_window_lines_before = 40;
inline constexpr std::size_t k_window_lines_after = 12;
inline constexpr std::size_t k_window_bytes = 2 * 1024;        // before the cursor
inline constexpr std::size_t k_window_bytes_after = 1024;      // after it
inline constexpr std::chrono::microseconds k_syntax_budget{5000};  // CPU time for all parses of one suggestion
inline constexpr int k_max_parses = 40;

// The document around the cursor, for syntax_trim. Views into the request's
// text, valid while it is.
struct syntax_window {
  const index::syntax_language* language = nullptr;  // null: no grammar, line rules only
  std::string_view before;  // from a line start up to the cursor
  std::string_view after;   // from the cursor to a line end
};

syntax_window make_syntax_window(std::string_view text, std::size_t cursor, const index::syntax_language* language);

// Where a degenerate run starts to be cut (the offset to cut at), or npos.
std::size_t repetition_cut(std::string_view s);
// The same, for a run that reaches the end of `s` (streaming).
std::size_t repetition_cut_at_end(std::string_view s);
std::string cut_repetition(std::string s);

std::string drop_duplicate_closers(std::string s, std::string_view after_cursor);
// `after` is the text after the cursor (the rest of its line and a few lines).
std::string balance_brackets(std::string s, std::string_view after);

struct syntax_trim_stats {
  int parses = 0;
  bool timed_out = false;
  bool error_cut = false;  // cut to stop adding an error
  bool block_cut = false;  // cut at the end of the enclosing construct
};

std::string syntax_trim(std::string s, const syntax_window& w, std::chrono::microseconds budget = k_syntax_budget,
                        syntax_trim_stats* stats = nullptr);

}  // namespace qf::server::completion
