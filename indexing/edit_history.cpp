// Edit history (see the header).
#include "indexing/edit_history.h"

#include <algorithm>

#include "indexing/lines.h"

namespace qf::index {
namespace {

std::vector<std::string_view> lines_of(std::string_view text) {
  std::vector<std::string_view> out = split_lines(text);
  for (std::string_view& l : out) l = strip_line_break(l);
  return out;
}

std::string_view path_of(std::string_view uri) {
  if (uri.starts_with("file://")) uri.remove_prefix(7);
  while (uri.starts_with("/")) uri.remove_prefix(1);
  return uri;
}

std::size_t side_bytes(const std::vector<std::string>& v) {
  std::size_t n = 0;
  for (const std::string& s : v) n += s.size() + 1;
  return n;
}

}  // namespace

std::size_t edit_hunk::bytes() const { return uri.size() + side_bytes(old_lines) + side_bytes(new_lines); }

edit_history::edit_history(edit_history_limits limits) : limits_(limits) {}

void edit_history::record(std::string_view uri, std::string_view before, std::string_view after,
                          std::int64_t version) {
  if (before == after) return;
  // The differing lines: common leading and trailing lines removed.
  const std::vector<std::string_view> a = lines_of(before), b = lines_of(after);
  std::size_t head = 0;
  while (head < a.size() && head < b.size() && a[head] == b[head]) ++head;
  std::size_t tail = 0;
  while (tail < a.size() - head && tail < b.size() - head && a[a.size() - 1 - tail] == b[b.size() - 1 - tail]) ++tail;
  const std::size_t old_n = a.size() - head - tail, new_n = b.size() - head - tail;
  if (old_n == 0 && new_n == 0) return;  // only line endings differed

  std::lock_guard<std::mutex> lock(mu_);
  // The document's newest hunk, if the edit touches it (in `before`'s lines).
  auto last = std::find_if(hunks_.rbegin(), hunks_.rend(), [&](const edit_hunk& h) { return h.uri == uri; });
  edit_hunk h;
  std::size_t lo = head, hi = head + old_n;  // the region of `before` the new hunk covers
  bool merged = false;
  if (last != hunks_.rend() && !last->truncated) {
    const std::size_t s = last->line, e = last->line + last->new_lines.size();
    if (lo <= e && hi >= s && e <= a.size()) {
      // Merge: the region of `before` covering both, its old text is the
      // older hunk's old lines with the unchanged lines around them.
      const std::size_t mlo = std::min(lo, s), mhi = std::max(hi, e);
      h.old_lines.reserve(mhi - mlo);
      for (std::size_t i = mlo; i < s; ++i) h.old_lines.emplace_back(a[i]);
      h.old_lines.insert(h.old_lines.end(), last->old_lines.begin(), last->old_lines.end());
      for (std::size_t i = e; i < mhi; ++i) h.old_lines.emplace_back(a[i]);
      lo = mlo;
      hi = mhi;
      merged = true;
      bytes_ -= last->bytes();
      hunks_.erase(std::next(last).base());
    }
  }
  if (!merged)
    for (std::size_t i = head; i < head + old_n; ++i) h.old_lines.emplace_back(a[i]);
  // New lines: the region [lo, hi) of `before` as `after` has it.
  const std::size_t new_end = hi + b.size() - a.size();  // lines after the region are common
  for (std::size_t i = lo; i < new_end; ++i) h.new_lines.emplace_back(b[i]);
  // Hunks of this document below the region move with the line delta.
  const std::int64_t delta = static_cast<std::int64_t>(b.size()) - static_cast<std::int64_t>(a.size());
  for (edit_hunk& o : hunks_)
    if (o.uri == uri && o.line >= hi) o.line = static_cast<std::uint32_t>(std::max<std::int64_t>(0, o.line + delta));
  if (h.old_lines == h.new_lines) {
    enforce_bounds();
    return;
  }
  h.uri = std::string(uri);
  h.version = version;
  h.seq = ++seq_;
  h.line = static_cast<std::uint32_t>(lo);
  const std::size_t cap = limits_.max_hunk_lines;
  if (h.old_lines.size() > cap || h.new_lines.size() > cap) {
    h.truncated = true;
    if (h.old_lines.size() > cap) h.old_lines.resize(cap);
    if (h.new_lines.size() > cap) h.new_lines.resize(cap);
  }
  bytes_ += h.bytes();
  hunks_.push_back(std::move(h));
  enforce_bounds();
}

void edit_history::enforce_bounds() {
  while (!hunks_.empty() && (hunks_.size() > limits_.max_hunks || bytes_ > limits_.max_bytes)) {
    bytes_ -= hunks_.front().bytes();
    hunks_.erase(hunks_.begin());
  }
}

void edit_history::forget(std::string_view uri) {
  std::lock_guard<std::mutex> lock(mu_);
  std::erase_if(hunks_, [&](const edit_hunk& h) {
    if (h.uri != uri) return false;
    bytes_ -= h.bytes();
    return true;
  });
}

std::vector<edit_hunk> edit_history::recent(std::string_view uri, std::size_t max) const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<edit_hunk> out;
  for (auto it = hunks_.rbegin(); it != hunks_.rend() && out.size() < max; ++it)
    if (uri.empty() || it->uri == uri) out.push_back(*it);
  return out;
}

std::size_t edit_history::size() const {
  std::lock_guard<std::mutex> lock(mu_);
  return hunks_.size();
}

std::size_t edit_history::bytes() const {
  std::lock_guard<std::mutex> lock(mu_);
  return bytes_;
}

std::string render_unified_diff(const edit_hunk& h) { return render_unified_diff(std::vector<edit_hunk>{h}); }

std::string render_unified_diff(const std::vector<edit_hunk>& hunks) {
  std::string out;
  std::string_view file;
  for (const edit_hunk& h : hunks) {
    if (file != h.uri || out.empty()) {
      file = h.uri;
      const std::string_view p = path_of(h.uri);
      out.append("--- a/").append(p).append("\n+++ b/").append(p).append("\n");
    }
    // diff -U0 numbering: an empty side names the line before it.
    const std::size_t no = h.old_lines.size(), nn = h.new_lines.size();
    const std::size_t os = no ? h.line + 1 : h.line, ns = nn ? h.line + 1 : h.line;
    out.append("@@ -").append(std::to_string(os));
    if (no != 1) out.append(",").append(std::to_string(no));
    out.append(" +").append(std::to_string(ns));
    if (nn != 1) out.append(",").append(std::to_string(nn));
    out.append(" @@\n");
    for (const std::string& l : h.old_lines) out.append("-").append(l).append("\n");
    for (const std::string& l : h.new_lines) out.append("+").append(l).append("\n");
  }
  return out;
}

}  // namespace qf::index
