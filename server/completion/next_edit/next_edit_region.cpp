// Regions of next-edit prediction (see the header).
#include "server/completion/next_edit/next_edit_region.h"

#include <algorithm>
#include <cctype>
#include <set>
#include <vector>

#include "text/lines.h"

namespace qf::server::completion {
namespace {

int64_t line_count(std::string_view t) { return static_cast<int64_t>(text::split_lines(t).size()); }

size_t line_end(std::string_view t, int64_t line) {
  const size_t b = text::line_start_offset(t, line);
  const text::line_break br = text::find_line_break(t, b);
  return br.len ? br.pos : t.size();
}

bool word_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || (c & 0x80); }

std::set<std::string> words_of(const std::vector<std::string>& lines) {
  std::set<std::string> out;
  for (const std::string& l : lines)
    for (size_t i = 0; i < l.size();) {
      if (!word_char(l[i])) {
        ++i;
        continue;
      }
      size_t j = i;
      while (j < l.size() && word_char(l[j])) ++j;
      if (!std::isdigit(static_cast<unsigned char>(l[i]))) out.insert(l.substr(i, j - i));
      i = j;
    }
  return out;
}

// Offset of `w` as a whole word in `line`, or npos.
size_t find_word(std::string_view line, std::string_view w) {
  for (size_t at = line.find(w); at != std::string_view::npos; at = line.find(w, at + 1)) {
    const bool left = at == 0 || !word_char(line[at - 1]);
    const bool right = at + w.size() >= line.size() || !word_char(line[at + w.size()]);
    if (left && right) return at;
  }
  return std::string_view::npos;
}

}  // namespace

text_region region_around(std::string_view text, int64_t line, int lines, int context_lines) {
  const int64_t n = line_count(text);
  lines = std::max(1, lines);
  line = std::clamp<int64_t>(line, 0, n - 1);
  int64_t first = std::max<int64_t>(0, line - lines / 2);
  const int64_t last = std::min<int64_t>(n - 1, first + lines - 1);
  first = std::max<int64_t>(0, std::min(first, last - lines + 1));
  return region_of_lines(text, first, last, context_lines);
}

text_region region_of_lines(std::string_view text, int64_t first, int64_t last, int context_lines) {
  const int64_t n = line_count(text);
  last = std::clamp<int64_t>(last, 0, n - 1);
  first = std::clamp<int64_t>(first, 0, last);
  text_region r;
  r.first_line = first;
  r.last_line = last;
  r.begin = text::line_start_offset(text, first);
  r.end = line_end(text, last);
  r.context_begin = text::line_start_offset(text, std::max<int64_t>(0, first - context_lines));
  r.context_end = line_end(text, std::min<int64_t>(n - 1, last + context_lines));
  return r;
}

std::string region_before_edit(std::string_view text, const text_region& r, const index::edit_hunk* latest) {
  std::string now(text.substr(r.begin, r.end - r.begin));
  if (!latest || latest->truncated) return now;
  const int64_t h0 = latest->line, h1 = h0 + static_cast<int64_t>(latest->new_lines.size());  // [h0, h1)
  if (h0 < r.first_line || h1 > r.last_line + 1) return now;
  std::vector<std::string_view> lines = text::split_lines(now);
  std::string out;
  auto put = [&](std::string_view l) {
    out.append(l);
    out.push_back('\n');
  };
  const int64_t rel0 = h0 - r.first_line, rel1 = h1 - r.first_line;
  for (int64_t i = 0; i < static_cast<int64_t>(lines.size()); ++i) {
    if (i == rel0)
      for (const std::string& o : latest->old_lines) put(o);
    if (i >= rel0 && i < rel1) continue;
    put(text::strip_line_break(lines[i]));
  }
  if (rel0 == static_cast<int64_t>(lines.size()))
    for (const std::string& o : latest->old_lines) put(o);
  if (!out.empty()) out.pop_back();
  return out;
}

std::optional<second_place> find_second_place(std::string_view text, const text_region& first,
                                              const index::edit_hunk& latest, int64_t cursor_line) {
  std::set<std::string> removed = words_of(latest.old_lines);
  for (const std::string& w : words_of(latest.new_lines)) removed.erase(w);
  if (removed.empty()) return std::nullopt;
  const std::vector<std::string_view> lines = text::split_lines(text);
  std::optional<second_place> best;
  int64_t best_dist = INT64_MAX;
  size_t off = 0;
  for (int64_t i = 0; i < static_cast<int64_t>(lines.size()); off += lines[i].size(), ++i) {
    if (i >= first.first_line && i <= first.last_line) continue;
    const std::string_view l = text::strip_line_break(lines[i]);
    for (const std::string& w : removed) {
      const size_t at = find_word(l, w);
      if (at == std::string_view::npos) continue;
      const int64_t d = i > cursor_line ? i - cursor_line : cursor_line - i;
      if (d < best_dist) {
        best_dist = d;
        best = second_place{i, off + at};
      }
      break;
    }
  }
  return best;
}

}  // namespace qf::server::completion
