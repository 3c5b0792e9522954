// Edit history (see the header).
#include "indexing/edit_history.h"

#include <algorithm>

#include "text/lines.h"

namespace qf::index {
namespace {

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

namespace {

bool mid_crlf(std::string_view t, std::size_t i) { return i > 0 && i < t.size() && t[i - 1] == '\r' && t[i] == '\n'; }
bool at_line_start(std::string_view t, std::size_t i) {
  return i == 0 || (text::is_line_break_char(t[i - 1]) && !mid_crlf(t, i));
}
std::size_t line_begin_at_or_before(std::string_view t, std::size_t i) {
  while (!at_line_start(t, i)) --i;
  return i;
}
// The lines (without breaks) of t[begin, end), which starts at a line start.
void split_into(std::string_view t, std::size_t begin, std::size_t end, std::vector<std::string>& out) {
  while (begin < end) {
    const text::line_break br = text::find_line_break(t, begin);
    const std::size_t ce = br.len ? std::min(br.pos, end) : end;
    out.emplace_back(t.substr(begin, ce - begin));
    begin = br.len ? br.pos + br.len : end;
  }
}
// `n` whole lines of t in front of offset `begin` (a line start), in order.
std::vector<std::string> lines_before(std::string_view t, std::size_t begin, std::size_t n) {
  std::size_t b = begin;
  for (std::size_t k = 0; k < n && b > 0; ++k) b = line_begin_at_or_before(t, b - 1);
  std::vector<std::string> out;
  split_into(t, b, begin, out);
  return out;
}
// `n` whole lines of t from offset `begin` (a line start).
std::vector<std::string> lines_from(std::string_view t, std::size_t begin, std::size_t n) {
  std::size_t e = begin;
  for (std::size_t k = 0; k < n && e < t.size(); ++k) {
    const text::line_break br = text::find_line_break(t, e);
    e = br.len ? br.pos + br.len : t.size();
  }
  std::vector<std::string> out;
  split_into(t, begin, e, out);
  return out;
}

}  // namespace

void edit_history::record(std::string_view uri, std::string_view a, std::string_view b, std::int64_t version) {
  if (a == b) return;
  // The differing bytes, widened to whole lines; only this region is split
  // into lines (a keystroke in a large file costs a scan, not a split of it).
  const std::size_t p = static_cast<std::size_t>(std::mismatch(a.begin(), a.end(), b.begin(), b.end()).first - a.begin());
  std::size_t q = 0;
  const std::size_t max_q = std::min(a.size(), b.size()) - p;
  while (q < max_q && a[a.size() - 1 - q] == b[b.size() - 1 - q]) ++q;
  const std::size_t rs = line_begin_at_or_before(a, p);
  std::size_t k = 0;  // extend both ends into the common suffix up to a line start
  if (q > 0 && !(at_line_start(a, a.size() - q) && at_line_start(b, b.size() - q))) {
    const std::string_view suffix = a.substr(a.size() - q);
    const text::line_break br = text::find_line_break(suffix, 0);
    k = br.len ? br.pos + br.len : q;
    if (br.len == 1 && suffix[br.pos] == '\r' && br.pos + 1 < suffix.size() && suffix[br.pos + 1] == '\n') k = br.pos + 2;
  }
  const std::size_t ae = a.size() - q + k, be = b.size() - q + k;
  std::vector<std::string> old_region, new_region;
  split_into(a, rs, ae, old_region);
  split_into(b, rs, be, new_region);
  if (old_region == new_region) return;  // only line endings differed
  const std::size_t head = static_cast<std::size_t>(text::line_col_of_offset(a.substr(0, rs), rs).line);
  const std::size_t lo = head, hi = head + old_region.size();
  const std::int64_t delta =
      static_cast<std::int64_t>(new_region.size()) - static_cast<std::int64_t>(old_region.size());

  std::lock_guard<std::mutex> lock(mu_);
  edit_hunk h;
  std::size_t mlo = lo;
  auto last = std::find_if(hunks_.rbegin(), hunks_.rend(), [&](const edit_hunk& x) { return x.uri == uri; });
  if (last != hunks_.rend() && !last->truncated && lo <= last->line + last->new_lines.size() && hi >= last->line) {
    // Merge with the document's newest hunk: the region of `a` covering both.
    // Its old text is the older hunk's old lines with the unchanged lines
    // around them; its new text is the region as `b` has it.
    const std::size_t s = last->line, e = last->line + last->new_lines.size();
    mlo = std::min(lo, s);
    const std::size_t mhi = std::max(hi, e);
    std::vector<std::string> above = lines_before(a, rs, lo - mlo);  // lines [mlo, lo) of a
    std::vector<std::string> below = lines_from(a, ae, mhi - hi);    // lines [hi, mhi) of a
    // Old: a's lines [mlo, s) + the old hunk's old lines + a's lines [e, mhi).
    std::vector<std::string> region_a = above;
    region_a.insert(region_a.end(), old_region.begin(), old_region.end());
    region_a.insert(region_a.end(), below.begin(), below.end());
    for (std::size_t i = mlo; i < s; ++i) h.old_lines.push_back(region_a[i - mlo]);
    h.old_lines.insert(h.old_lines.end(), last->old_lines.begin(), last->old_lines.end());
    for (std::size_t i = e; i < mhi; ++i) h.old_lines.push_back(region_a[i - mlo]);
    h.new_lines = std::move(above);
    h.new_lines.insert(h.new_lines.end(), new_region.begin(), new_region.end());
    h.new_lines.insert(h.new_lines.end(), below.begin(), below.end());
    bytes_ -= last->bytes();
    hunks_.erase(std::next(last).base());
  } else {
    h.old_lines = std::move(old_region);
    h.new_lines = std::move(new_region);
  }
  // Hunks of this document below the region move with the line delta.
  for (edit_hunk& o : hunks_)
    if (o.uri == uri && o.line >= hi) o.line = static_cast<std::uint32_t>(std::max<std::int64_t>(0, o.line + delta));
  if (h.old_lines == h.new_lines) {
    enforce_bounds();
    return;
  }
  h.uri = std::string(uri);
  h.version = version;
  h.seq = ++seq_;
  h.line = static_cast<std::uint32_t>(mlo);
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
