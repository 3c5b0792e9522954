// The trigger decision: whether to complete at this cursor at all, and what
// shape of suggestion to expect.
//
// Runs once per request, before any engine work: the pipeline (and the
// remote source, in place of the pipeline; a route that falls back from one
// source to the next has each decide again) decides right after making the
// cursor context (cursor_context.h) and answers nothing when skip is set. The
// decision then goes with the request to the stop rules (stop_rules.h) and
// the cleanup (cleanup.h). Rules: no automatic completion in the middle of a
// word with code to its right (unless autoTriggerMidWord); multi-line when a
// block is expected (explicit invocation, an empty line, the end of a line
// that opens a block); at column 0 of a line with code the suggestion is
// whole lines put before that code (inserts_lines), multi-line only when
// invoked; with the stop rules off generation is fixed-length (no line rule).
#pragma once

#include "server/completion/api/settings.h"
#include "server/completion/postprocess/cursor_context.h"

namespace qf::server::completion {

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

}  // namespace qf::server::completion
