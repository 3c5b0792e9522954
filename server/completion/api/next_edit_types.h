// The seam for next-edit prediction between the server and the pipeline:
// what the server asks (a document snapshot, the cursor, the edit history)
// and what it gets back (minimal text edits, each with its range in the
// snapshot the request read).
//
// Positions are 0-based lines and UTF-8 byte columns, as in
// completion_provider.h; the server converts them to the client's encoding.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "indexing/edit_history.h"
#include "indexing/shared_text.h"

namespace qf::server {

struct next_edit_pos {
  int64_t line = 0;
  int64_t byte_col = 0;
  bool operator==(const next_edit_pos&) const = default;
};

struct next_edit_request {
  std::string uri;
  // The key of this buffer's caches (empty: the URI); see completion_request.
  std::string buffer_key;
  const std::string& cache_key() const { return buffer_key.empty() ? uri : buffer_key; }
  int64_t version = 0;
  std::string language_id;
  index::shared_text text;  // the store's snapshot, shared
  next_edit_pos cursor;
  std::chrono::steady_clock::time_point received;
  std::chrono::steady_clock::time_point deadline;  // zero: none
  // Other open documents, most recently used first (related files).
  struct other_doc { std::string uri; index::shared_text text; };
  std::vector<other_doc> context_docs;
  std::shared_ptr<const index::edit_history> edits;  // null: no history
};

// One edit: replace [begin, end) of the snapshot by new_text.
struct next_edit_edit {
  next_edit_pos begin;
  next_edit_pos end;
  std::string new_text;
  bool at_cursor = false;  // the edit touches the cursor's line
};

struct next_edit_metrics {
  double total_ms = 0;
  int64_t tokens_reused = 0;
  int64_t tokens_evaluated = 0;
  int64_t tokens_generated = 0;
  int64_t tokens_drafted = 0;
  int64_t tokens_accepted = 0;
  int regions = 0;  // regions decoded (1 or 2)
};

struct next_edit_result {
  std::vector<next_edit_edit> edits;  // in document order, not overlapping
  std::string format;                 // the prompt format used ("" when none applies)
  std::string reason;                 // why there are no edits, when there are none
  bool incomplete = false;            // the budget ran out before a region was rewritten
  next_edit_metrics metrics;
};

}  // namespace qf::server
