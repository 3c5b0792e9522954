// Minimal text edits between a region of a document and the model's rewrite
// of it.
//
// The two texts are compared line by line (longest common subsequence of
// whole lines, line breaks included), each run of differing lines becomes
// one edit, and each edit is then narrowed to the bytes that really differ:
// the common leading and trailing characters of its old and new text are
// dropped (never splitting a UTF-8 sequence). Equal texts give no edits,
// which the caller answers as silence. Offsets are bytes into the old text.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace qf::server::completion {

struct region_edit {
  size_t begin = 0;  // [begin, end) of the old text
  size_t end = 0;
  std::string new_text;
  bool operator==(const region_edit&) const = default;
};

// Edits that turn `old_text` into `new_text`, in order and not overlapping.
std::vector<region_edit> diff_region(std::string_view old_text, std::string_view new_text);

// Applies `edits` (as diff_region returns them) to `text`.
std::string apply_region_edits(std::string_view text, const std::vector<region_edit>& edits);

}  // namespace qf::server::completion
