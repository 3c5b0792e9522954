// Edits for syntax trees (see syntax_edit.h).
#include "indexing/syntax_edit.h"

#include <algorithm>
#include <cstring>

namespace qf::index {

namespace {

void find_newlines(std::string_view text, std::size_t base, std::vector<std::size_t>& out) {
  const char* p = text.data();
  const char* end = p + text.size();
  while (p < end) {
    const void* hit = std::memchr(p, '\n', static_cast<std::size_t>(end - p));
    if (!hit) break;
    const char* nl = static_cast<const char*>(hit);
    out.push_back(base + static_cast<std::size_t>(nl - text.data()));
    p = nl + 1;
  }
}

}  // namespace

newline_index::newline_index(std::string_view text) { find_newlines(text, 0, newlines_); }

text_point newline_index::point_at(std::size_t offset) const {
  // Newlines strictly before `offset`.
  const auto it = std::lower_bound(newlines_.begin(), newlines_.end(), offset);
  const std::size_t row = static_cast<std::size_t>(it - newlines_.begin());
  const std::size_t line_start = row == 0 ? 0 : newlines_[row - 1] + 1;
  return {static_cast<std::uint32_t>(row), static_cast<std::uint32_t>(offset - line_start)};
}

void newline_index::apply(const byte_edit& e, std::string_view after) {
  auto lo = std::lower_bound(newlines_.begin(), newlines_.end(), e.start);
  auto hi = std::lower_bound(lo, newlines_.end(), e.old_end);
  for (auto it = hi; it != newlines_.end(); ++it) *it = *it - e.old_end + e.new_end;
  std::vector<std::size_t> inserted;
  if (e.new_end > e.start) find_newlines(after.substr(e.start, e.new_end - e.start), e.start, inserted);
  // Reuse the erased slots first, then insert or erase the difference.
  const std::size_t removed = static_cast<std::size_t>(hi - lo);
  const std::size_t common = std::min(removed, inserted.size());
  std::copy(inserted.begin(), inserted.begin() + static_cast<std::ptrdiff_t>(common), lo);
  auto pos = lo + static_cast<std::ptrdiff_t>(common);
  if (removed > common)
    newlines_.erase(pos, hi);
  else if (inserted.size() > common)
    newlines_.insert(pos, inserted.begin() + static_cast<std::ptrdiff_t>(common), inserted.end());
}

std::optional<change_hint> hint_of(const std::vector<text_change>& changes) {
  if (changes.size() != 1 || !changes[0].range) return std::nullopt;
  return change_hint{*changes[0].range, changes[0].text.size()};
}

byte_edit diff_edit(std::string_view before, std::string_view after) {
  const std::size_t n = std::min(before.size(), after.size());
  std::size_t prefix = 0;
  // Compare in blocks first (memcmp is much faster than a byte loop on large texts).
  constexpr std::size_t block = 4096;
  while (prefix + block <= n && std::memcmp(before.data() + prefix, after.data() + prefix, block) == 0)
    prefix += block;
  while (prefix < n && before[prefix] == after[prefix]) ++prefix;
  std::size_t suffix = 0;
  const std::size_t max_suffix = n - prefix;
  while (suffix + block <= max_suffix &&
         std::memcmp(before.data() + before.size() - suffix - block, after.data() + after.size() - suffix - block,
                     block) == 0)
    suffix += block;
  while (suffix < max_suffix && before[before.size() - 1 - suffix] == after[after.size() - 1 - suffix]) ++suffix;
  return {prefix, before.size() - suffix, after.size() - suffix};
}

byte_edit edit_between(const document& before, const document& after, const std::optional<change_hint>& hint,
                       text::position_encoding enc) {
  if (hint) {
    const text_range& r = hint->range;
    const auto start = text::offset_of(before.text, before.lines, r.start_line, r.start_character, enc);
    const auto old_end = text::offset_of(before.text, before.lines, r.end_line, r.end_character, enc);
    if (start && old_end && *start <= *old_end && *old_end <= before.text.size()) {
      const std::size_t new_end = *start + hint->inserted_bytes;
      // The store must have replaced exactly these bytes; when it did
      // something else (it rewrote the inserted text, say), fall back.
      if (before.text.size() - (*old_end - *start) + hint->inserted_bytes == after.text.size() &&
          new_end <= after.text.size())
        return {*start, *old_end, new_end};
    }
  }
  return diff_edit(before.text, after.text);
}

}  // namespace qf::index
