// Edit history: the recent edits of every open document, coalesced into
// hunks and renderable as unified diffs (the prompt's "recent edits" block;
// next-edit prediction reads the same hunks).
//
// record() takes the document's text before and after one applied didChange
// batch and reduces it to one line-granular hunk: the lines that differ
// between the two (common leading and trailing lines removed). A hunk that
// touches or overlaps the document's most recent hunk merges into it, so a run
// of keystrokes in one place is one hunk showing the text before the run and
// after it; a hunk whose old and new lines end up equal (typed and undone)
// disappears. Hunks of a document below an edit move with the line delta.
// Bounds: at most max_hunks hunks and max_bytes of hunk text in all (oldest
// dropped first), each side of a hunk at most max_hunk_lines lines (longer
// sides are kept cut, marked `truncated`).
//
// Thread-safe: the server records on its dispatcher thread while the
// completion worker reads; every read returns copies.
#pragma once

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

namespace qf::index {

struct edit_hunk {
  std::string uri;
  std::int64_t version = 0;          // the document version after the hunk's last edit
  std::uint64_t seq = 0;             // recency: larger is newer (bumped by each merge)
  std::uint32_t line = 0;            // 0-based first line of the hunk, in the current text
  std::vector<std::string> old_lines;  // without line breaks
  std::vector<std::string> new_lines;
  bool truncated = false;            // a side was cut at max_hunk_lines
  std::size_t bytes() const;
};

struct edit_history_limits {
  std::size_t max_hunks = 64;
  std::size_t max_bytes = std::size_t(64) << 10;
  std::size_t max_hunk_lines = 48;
};

class edit_history {
 public:
  explicit edit_history(edit_history_limits limits = {});

  // One applied batch of `uri`: its text before and after, the version after.
  void record(std::string_view uri, std::string_view before, std::string_view after, std::int64_t version);
  // The document is gone: its hunks are dropped.
  void forget(std::string_view uri);

  // Hunks, newest first, at most `max` (uri empty: every document).
  std::vector<edit_hunk> recent(std::string_view uri = {}, std::size_t max = SIZE_MAX) const;
  std::size_t size() const;
  std::size_t bytes() const;

 private:
  void enforce_bounds();  // with mu_ held
  edit_history_limits limits_;
  mutable std::mutex mu_;
  std::vector<edit_hunk> hunks_;  // oldest first
  std::uint64_t seq_ = 0;
  std::size_t bytes_ = 0;
};

// A unified diff of `hunks` with no context lines (`diff -U0`), grouped by
// file in the order given: "--- a/PATH\n+++ b/PATH\n@@ -L,N +L,M @@\n-old\n+new\n".
// PATH is the uri without its file:// scheme.
std::string render_unified_diff(const std::vector<edit_hunk>& hunks);
std::string render_unified_diff(const edit_hunk& hunk);

}  // namespace qf::index
