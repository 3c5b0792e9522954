// Edits as a syntax tree needs them: byte offsets and (row, byte column)
// points of the replaced range before and after a didChange.
//
// Tree-sitter counts rows at "\n" only (a lone "\r" does not end its rows,
// unlike the LSP line table), so points come from a separate index of "\n"
// offsets that is updated by each edit instead of rebuilt. An edit is exact
// when the batch was one ranged change (offsets from the text before it and
// the inserted length); any other batch (several changes, a whole-text
// replacement) becomes the one edit between the common prefix and suffix of
// the two texts, which is also what a client sending whole texts needs to get
// an incremental parse. Knows nothing of tree-sitter itself.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "indexing/document.h"

namespace qf::index {

// Bytes [start, old_end) of the old text became [start, new_end) of the new one.
struct byte_edit {
  std::size_t start = 0;
  std::size_t old_end = 0;
  std::size_t new_end = 0;
  bool operator==(const byte_edit&) const = default;
};

// Row = number of "\n" before the offset; column = bytes since the last "\n".
struct text_point {
  std::uint32_t row = 0;
  std::uint32_t column = 0;
  bool operator==(const text_point&) const = default;
};

class newline_index {
 public:
  newline_index() = default;
  explicit newline_index(std::string_view text);
  text_point point_at(std::size_t offset) const;
  // Updates the index for `e`; `after` is the whole text after the edit.
  void apply(const byte_edit& e, std::string_view after);
  std::size_t newline_count() const { return newlines_.size(); }

 private:
  std::vector<std::size_t> newlines_;  // sorted offsets of '\n'
};

// What the worker needs of a didChange batch to compute its exact edit: its
// one range and the byte length of the inserted text.
struct change_hint {
  text_range range;
  std::size_t inserted_bytes = 0;
};
// A hint for a batch of exactly one ranged change; nullopt otherwise.
std::optional<change_hint> hint_of(const std::vector<text_change>& changes);

// The smallest single edit turning `before` into `after`.
byte_edit diff_edit(std::string_view before, std::string_view after);

// The edit that turned `before` into `after`: exact from `hint` when it is
// consistent with both texts' lengths, the diff otherwise.
byte_edit edit_between(const document& before, const document& after, const std::optional<change_hint>& hint,
                       text::position_encoding enc);

}  // namespace qf::index
