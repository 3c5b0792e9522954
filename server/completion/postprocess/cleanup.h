// The cleanup of a suggestion: the final text made into what the editor gets.
//
// Runs once per candidate on the final text, after decoding (after the stop
// rules of stop_rules.h cut it): by the pipeline before duplicates and the
// confidence gate are dropped, and by the remote source on its answer.
// finalize repairs the model's text to valid UTF-8, normalizes its line
// breaks, trims, cuts degenerate repetition, drops a tail that duplicates
// the text right of the cursor (closing brackets and quotes included) or
// the following lines, applies the syntax rules of syntax_rules.h when the
// language has a grammar (else the bracket balance of multi-line
// suggestions), and converts to the document's line ending. With the stop
// rules off only the UTF-8 repair and the line endings apply. Inserted lines
// (trigger_decision::inserts_lines) keep their last line break.
// make_candidate then builds the edit: it replaces the word before the cursor
// so that a client's filter keeps the item visible while the user types on.
#pragma once

#include <string>

#include "server/completion/api/completion_provider.h"
#include "server/completion/postprocess/cursor_context.h"
#include "server/completion/postprocess/syntax_rules.h"
#include "server/completion/postprocess/trigger.h"

namespace qf::server::completion {

// `window`: the document around the cursor with its grammar (null: line
// rules only); `stats` (optional) receives what the syntax rules did.
std::string finalize(std::string text, const cursor_context& cx, const trigger_decision& d, bool stop_rules,
                     const syntax_window* window = nullptr, syntax_trim_stats* stats = nullptr);

// Labels are at most this many bytes (cut at a character boundary) plus " ..."
// for a multi-line candidate.
inline constexpr size_t k_label_bytes = 80;

completion_candidate make_candidate(const std::string& text, const cursor_context& cx);

}  // namespace qf::server::completion
