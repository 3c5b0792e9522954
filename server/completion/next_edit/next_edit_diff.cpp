// Minimal edits between a region and its rewrite (see the header).
#include "server/completion/next_edit/next_edit_diff.h"

#include <algorithm>
#include <cstdint>

#include "text/lines.h"

namespace qf::server::completion {
namespace {

// The lines of `t`, each with its line break.
std::vector<std::string_view> lines_with_breaks(std::string_view t) {
  std::vector<std::string_view> out;
  size_t b = 0;
  while (b < t.size()) {
    const text::line_break br = text::find_line_break(t, b);
    const size_t e = br.len ? br.pos + br.len : t.size();
    out.push_back(t.substr(b, e - b));
    b = e;
  }
  return out;
}

bool continuation(char c) { return (static_cast<unsigned char>(c) & 0xC0) == 0x80; }

// Narrows one edit to the bytes that differ, at character boundaries.
void narrow(std::string_view old_text, region_edit& e) {
  std::string_view o = old_text.substr(e.begin, e.end - e.begin);
  std::string_view n = e.new_text;
  size_t p = 0;
  while (p < o.size() && p < n.size() && o[p] == n[p]) ++p;
  while (p > 0 && ((p < o.size() && continuation(o[p])) || (p < n.size() && continuation(n[p])))) --p;
  size_t s = 0;
  while (s < o.size() - p && s < n.size() - p && o[o.size() - 1 - s] == n[n.size() - 1 - s]) ++s;
  while (s > 0 && ((s < o.size() - p && continuation(o[o.size() - s])) ||
                   (s < n.size() - p && continuation(n[n.size() - s]))))
    --s;
  e.begin += p;
  e.end -= s;
  e.new_text = std::string(n.substr(p, n.size() - p - s));
}

}  // namespace

std::vector<region_edit> diff_region(std::string_view old_text, std::string_view new_text) {
  std::vector<region_edit> out;
  if (old_text == new_text) return out;
  const std::vector<std::string_view> a = lines_with_breaks(old_text), b = lines_with_breaks(new_text);
  const size_t n = a.size(), m = b.size();
  // Offsets of each line's start (and of the end).
  std::vector<size_t> ao(n + 1, 0), bo(m + 1, 0);
  for (size_t i = 0; i < n; ++i) ao[i + 1] = ao[i] + a[i].size();
  for (size_t j = 0; j < m; ++j) bo[j + 1] = bo[j] + b[j].size();
  auto emit = [&](size_t i0, size_t i1, size_t j0, size_t j1) {
    if (i0 == i1 && j0 == j1) return;
    region_edit e{ao[i0], ao[i1], std::string(new_text.substr(bo[j0], bo[j1] - bo[j0]))};
    narrow(old_text, e);
    if (e.begin != e.end || !e.new_text.empty()) out.push_back(std::move(e));
  };
  // Common leading and trailing lines first; the table covers only the middle.
  size_t lo = 0;
  while (lo < n && lo < m && a[lo] == b[lo]) ++lo;
  size_t hi = 0;
  while (hi < n - lo && hi < m - lo && a[n - 1 - hi] == b[m - 1 - hi]) ++hi;
  const size_t rn = n - lo - hi, rm = m - lo - hi;
  constexpr size_t k_max_cells = size_t(1) << 20;
  if (rn == 0 || rm == 0 || (rn + 1) * (rm + 1) > k_max_cells) {
    emit(lo, n - hi, lo, m - hi);  // one edit for the whole middle
    return out;
  }
  // LCS lengths of the suffixes: L[i][j] for a[lo+i..], b[lo+j..].
  std::vector<uint32_t> L((rn + 1) * (rm + 1), 0);
  auto at = [&](size_t i, size_t j) -> uint32_t& { return L[i * (rm + 1) + j]; };
  for (size_t i = rn; i-- > 0;)
    for (size_t j = rm; j-- > 0;)
      at(i, j) = a[lo + i] == b[lo + j] ? at(i + 1, j + 1) + 1 : std::max(at(i + 1, j), at(i, j + 1));
  size_t i = 0, j = 0, si = 0, sj = 0;  // (si, sj): start of the current run of differences
  while (i < rn && j < rm) {
    if (a[lo + i] == b[lo + j]) {
      emit(lo + si, lo + i, lo + sj, lo + j);
      ++i, ++j;
      si = i, sj = j;
    } else if (at(i + 1, j) >= at(i, j + 1)) {
      ++i;
    } else {
      ++j;
    }
  }
  emit(lo + si, n - hi, lo + sj, m - hi);
  return out;
}

std::string apply_region_edits(std::string_view text, const std::vector<region_edit>& edits) {
  std::string out;
  size_t at = 0;
  for (const region_edit& e : edits) {
    out.append(text.substr(at, e.begin - at));
    out.append(e.new_text);
    at = e.end;
  }
  out.append(text.substr(at));
  return out;
}

}  // namespace qf::server::completion
