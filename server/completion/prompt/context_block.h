// Context per request: what the prompt holds besides the current file's
// window, gathered when a layout is made (never per keystroke) and ranked
// within one token budget (completion.contextBlockTokens):
//
//   1. scope   the headers (class line, function signature) of the scopes
//              enclosing the cursor whose first line lies above the prefix
//              window: from the document's syntax tree, else by indentation;
//   2. definition  signatures of identifiers used in the lines around the
//              cursor (keywords and names the visible window defines left out),
//              looked up in index::definition_source; definitions in files the
//              current file imports first; definitions inside the window skipped;
//   3. recent  recently edited / viewed chunks of other places (index::recent_chunks),
//              those overlapping the window skipped;
//   4. edits   recent edits as unified diffs, one item per file
//              (index::edit_history), hunks inside the window skipped.
//
// Items are chosen by rank while they fit the budget (each at most a third of
// it, cut at whole lines). Their order in the prompt is sticky: items the
// previous layout of the document held keep their place, new ones follow, so
// a relayout whose items read as before produces the same tokens and the KV
// cache stays warm. Scope headers go right after the prefix marker (they are
// the lines the window cut off); the other items go before the current file,
// as pseudo files (`<file_sep>path`) for repo-level FIM formats, else as
// blocks headed by a comment in the current file's comment syntax.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "indexing/definitions.h"
#include "indexing/edit_history.h"
#include "indexing/recent_chunks.h"
#include "indexing/syntax_tree.h"

namespace qf::server::completion {

struct context_sources {
  std::string_view language_id;
  const index::syntax_tree* tree = nullptr;  // may be a few edits old
  const index::definition_source* definitions = nullptr;
  const index::edit_history* edits = nullptr;
  const index::recent_chunks* recent = nullptr;
};

struct context_item {
  std::string kind;    // "scope", "definition", "recent", "edits"
  std::string origin;  // uri or uri:line (1-based)
  std::string path;    // the pseudo file name the item is shown under
  std::string body;    // its text (whole lines)
  std::string key() const { return kind + "|" + origin; }
};

// What the request sees of its own document when the context is gathered.
struct context_view {
  std::string_view uri;
  std::string_view text;        // the whole document
  int64_t cursor_line = 0;      // 0-based line
  int64_t cursor_col = 0;       // byte column
  int64_t window_first_line = 0;  // first line of the prefix window
  int64_t window_end_line = 0;    // line after the last suffix line
  // Byte offsets of the starts of the cursor line, the window's first line and
  // the line after it (so that nothing here scans the document from its start).
  size_t cursor_line_begin = 0, window_begin = 0, window_end = 0;
};

// The start of the line before the one starting at `begin` (0 stays 0).
size_t prev_line_begin(std::string_view text, size_t begin);
// The start of the line after the one holding `pos` (text.size() at the end).
size_t next_line_begin(std::string_view text, size_t pos);

// Scope headers outside the window, outermost first (each one line, its indentation kept).
std::vector<context_item> scope_items(const context_view& v, const context_sources& src);
// Identifiers used in the lines around the cursor (nearest first), minus keywords
// and names the window [window_first_line, window_end_line) defines.
std::vector<std::string> identifiers_near_cursor(const context_view& v, int radius = 3);
std::vector<context_item> definition_items(const context_view& v, const context_sources& src, size_t max_items = 8);
std::vector<context_item> recent_items(const context_view& v, const context_sources& src, size_t max_items = 8);
std::vector<context_item> edit_items(const context_view& v, const context_sources& src, size_t max_hunks = 16);

// The comment marker of a language ("#", "//", "--", ";"), by language id or file extension.
std::string_view line_comment_of(std::string_view language_id, std::string_view uri);
// `uri` as a path relative to the directory of `current_uri` when below it, else without its scheme.
std::string display_path(std::string_view uri, std::string_view current_uri);

}  // namespace qf::server::completion
