// Where next-edit prediction looks: the editable region around the cursor,
// the excerpt around it, the region as it was before the latest edit, and a
// second place that the latest edit points to.
//
// Regions are whole lines: `lines` lines with the cursor's line in the
// middle (clamped to the document), the excerpt `context_lines` more on each
// side. The second place is the line nearest to the cursor, outside the
// first region, that still uses a word the latest edit of the document
// removed (a renamed parameter's old name, a field's old spelling): that is
// where the matching change is due.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "indexing/edit_history.h"

namespace qf::server::completion {

struct text_region {
  int64_t first_line = 0, last_line = 0;  // inclusive
  size_t begin = 0, end = 0;              // bytes: first line's start .. last line's end (break excluded)
  size_t context_begin = 0, context_end = 0;
};

text_region region_around(std::string_view text, int64_t line, int lines, int context_lines);
// The region of lines [first, last] (clamped to the document).
text_region region_of_lines(std::string_view text, int64_t first, int64_t last, int context_lines);

// The region's text before `latest` (the document's newest hunk) when the
// hunk lies inside it; otherwise the region as it is.
std::string region_before_edit(std::string_view text, const text_region& r, const index::edit_hunk* latest);

// The line of the second place and the byte offset of the word there, or nullopt.
struct second_place {
  int64_t line = 0;
  size_t offset = 0;
};
std::optional<second_place> find_second_place(std::string_view text, const text_region& first,
                                              const index::edit_hunk& latest, int64_t cursor_line);

}  // namespace qf::server::completion
