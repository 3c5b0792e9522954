// The stop rules: when the generator stops, decided while it decodes.
//
// Runs inside the decode loop, once per piece of text: the generator
// (decode/generator.cpp, each candidate on its own copy) and the remote
// source's stream feed every decoded piece to push(), which says when to
// stop, and take the text to hand on from final_text() when they end; that
// text then goes to the cleanup (cleanup.h) once. Besides, the generator asks
// at_line_end() near the deadline and publishes kept() for in-flight reuse
// (api/inflight.h). Single-line completions end at the first newline;
// multi-line ones end before a line whose indentation drops below the cursor
// line's (or returns to it after a block body, except for a closing
// bracket), or before a line repeating the next line of the document.
// Inserting lines at column 0 (trigger_decision::inserts_lines), the kept
// text keeps its last line break and ends before a line repeating the code
// right of the cursor or dedenting below that code's indentation (or the
// suggestion's first line's, when less). Streaming also stops at degenerate
// repetition (syntax_rules.h). Line breaks in the decoded text ("\r\n", "\r")
// are seen as '\n'.
#pragma once

#include <string>
#include <string_view>

#include "server/completion/postprocess/cursor_context.h"
#include "server/completion/postprocess/trigger.h"

namespace qf::server::completion {

class stop_checker {
 public:
  // `cx` must outlive the checker and its copies.
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
  // What decoding hands on when it ends: kept(), or kept_at_deadline() when
  // the deadline ended it before a stop rule did.
  std::string final_text(bool deadline_hit) const {
    return deadline_hit && !stopped_ ? kept_at_deadline() : kept();
  }

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

}  // namespace qf::server::completion
