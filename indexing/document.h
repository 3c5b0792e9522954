// One open document: its text, version and line table, and the application of
// LSP-style edits to it.
//
// Edits come as ranges in the negotiated position encoding (or as a whole new
// text). A batch of edits (one didChange) is applied to a copy and committed
// only when every edit in it is valid, so a malformed change (a line past the
// end, a start after its end) leaves the stored text exactly as it was.
// Characters past a line's end clamp to the line end, as the LSP spec says.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "text/position.h"

namespace qf::index {

struct text_range {
  std::uint32_t start_line = 0;
  std::uint32_t start_character = 0;
  std::uint32_t end_line = 0;
  std::uint32_t end_character = 0;
};

struct text_change {
  std::optional<text_range> range;  // absent: replace everything
  std::string text;
};

struct document {
  std::string uri;
  std::string language_id;
  std::int64_t version = 0;
  std::string text;
  text::line_table lines;

  document() = default;
  document(std::string uri_, std::string language_id_, std::int64_t version_, std::string text_);

  // Applies a batch in order; on failure returns false, sets *error and leaves
  // the document unchanged.
  bool apply(const std::vector<text_change>& changes, text::position_encoding enc, std::string* error);
};

// Applies one change to `text` (with `lines` describing it) in place.
bool apply_change(std::string& text, text::line_table& lines, const text_change& change, text::position_encoding enc,
                  std::string* error);

}  // namespace qf::index
