// .gitignore matching (see gitignore.h).
#include "indexing/gitignore.h"

namespace qf::index {

namespace {

constexpr std::size_t max_line = 4096;  // longer lines are not patterns anyone writes

}  // namespace

std::vector<std::string_view> split_path_segments(std::string_view p) {
  std::vector<std::string_view> out;
  std::size_t start = 0;
  while (start <= p.size()) {
    const std::size_t slash = p.find('/', start);
    const std::size_t end = slash == std::string_view::npos ? p.size() : slash;
    if (end > start) out.push_back(p.substr(start, end - start));
    if (slash == std::string_view::npos) break;
    start = slash + 1;
  }
  return out;
}

namespace {

// A bracket expression at pattern[i] == '['; sets *matched and returns the
// index after it, or npos when it is not closed (then '[' is literal).
std::size_t match_class(std::string_view pat, std::size_t i, char c, bool* matched) {
  std::size_t j = i + 1;
  bool negate = false;
  if (j < pat.size() && (pat[j] == '!' || pat[j] == '^')) {
    negate = true;
    ++j;
  }
  bool hit = false;
  bool first = true;
  while (j < pat.size() && (first || pat[j] != ']')) {
    first = false;
    char lo = pat[j];
    if (lo == '\\' && j + 1 < pat.size()) lo = pat[++j];
    char hi = lo;
    if (j + 2 < pat.size() && pat[j + 1] == '-' && pat[j + 2] != ']') {
      hi = pat[j + 2];
      if (hi == '\\' && j + 3 < pat.size()) {
        hi = pat[j + 3];
        ++j;
      }
      j += 2;
    }
    if (c >= lo && c <= hi) hit = true;
    ++j;
  }
  if (j >= pat.size()) return std::string_view::npos;
  *matched = hit != negate;
  return j + 1;
}

}  // namespace

// `**` segments against path segments: the classic star backtracking, one
// level up (a `**` segment matches any run of segments, also none).
bool glob_match_segments(const std::vector<std::string>& pat, const std::vector<std::string_view>& path,
                         std::size_t from) {
  std::size_t p = 0, t = from;
  std::size_t star_p = std::string::npos, star_t = 0;
  while (t < path.size()) {
    if (p < pat.size() && pat[p] == "**") {
      star_p = p++;
      star_t = t;
    } else if (p < pat.size() && glob_match_segment(pat[p], path[t])) {
      ++p;
      ++t;
    } else if (star_p != std::string::npos) {
      p = star_p + 1;
      t = ++star_t;
    } else {
      return false;
    }
  }
  while (p < pat.size() && pat[p] == "**") ++p;
  return p == pat.size();
}

bool glob_match_segment(std::string_view pat, std::string_view text) {
  std::size_t p = 0, t = 0;
  std::size_t star_p = std::string_view::npos, star_t = 0;
  while (t < text.size()) {
    if (p < pat.size()) {
      const char pc = pat[p];
      if (pc == '*') {
        while (p < pat.size() && pat[p] == '*') ++p;
        star_p = p;
        star_t = t;
        continue;
      }
      if (pc == '?') {
        ++p;
        ++t;
        continue;
      }
      if (pc == '[') {
        bool matched = false;
        const std::size_t next = match_class(pat, p, text[t], &matched);
        if (next != std::string_view::npos) {
          if (matched) {
            p = next;
            ++t;
            continue;
          }
        } else if (text[t] == '[') {
          ++p;
          ++t;
          continue;
        }
      } else {
        char lit = pc;
        std::size_t len = 1;
        if (pc == '\\' && p + 1 < pat.size()) {
          lit = pat[p + 1];
          len = 2;
        }
        if (lit == text[t]) {
          p += len;
          ++t;
          continue;
        }
      }
    }
    if (star_p == std::string_view::npos) return false;
    p = star_p;
    t = ++star_t;
  }
  while (p < pat.size() && pat[p] == '*') ++p;
  return p == pat.size();
}

ignore_file::ignore_file(std::string base, std::string_view contents) : base_(std::move(base)) {
  std::size_t start = 0;
  while (start < contents.size()) {
    std::size_t nl = contents.find('\n', start);
    if (nl == std::string_view::npos) nl = contents.size();
    std::string_view line = contents.substr(start, nl - start);
    start = nl + 1;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.empty() || line.size() > max_line || line.front() == '#') continue;
    // Trailing spaces go unless escaped with a backslash.
    while (!line.empty() && line.back() == ' ' && !(line.size() >= 2 && line[line.size() - 2] == '\\'))
      line.remove_suffix(1);
    if (line.empty()) continue;
    ignore_pattern pat;
    if (line.front() == '!') {
      pat.negated = true;
      line.remove_prefix(1);
    } else if (line.starts_with("\\!") || line.starts_with("\\#")) {
      line.remove_prefix(1);
    }
    if (!line.empty() && line.back() == '/') {
      pat.directory_only = true;
      while (!line.empty() && line.back() == '/') line.remove_suffix(1);
    }
    if (line.empty()) continue;
    // A slash at the start or in the middle anchors the pattern to base_.
    pat.anchored = line.find('/') != std::string_view::npos;
    for (auto s : split_path_segments(line)) pat.segments.emplace_back(s);
    if (pat.segments.empty()) continue;
    // "x/**" matches what is inside x, not x itself: one segment, then any run.
    if (pat.segments.size() > 1 && pat.segments.back() == "**") pat.segments.insert(pat.segments.end() - 1, "*");
    patterns_.push_back(std::move(pat));
  }
}

int ignore_file::match(std::string_view rel_path, bool is_dir) const {
  if (patterns_.empty()) return 0;
  std::string_view below = rel_path;
  if (!base_.empty()) {
    if (!(rel_path.size() > base_.size() && rel_path.starts_with(base_) && rel_path[base_.size()] == '/')) return 0;
    below = rel_path.substr(base_.size() + 1);
  }
  const std::vector<std::string_view> segs = split_path_segments(below);
  if (segs.empty()) return 0;
  for (std::size_t i = patterns_.size(); i-- > 0;) {
    const ignore_pattern& p = patterns_[i];
    if (p.directory_only && !is_dir) continue;
    bool hit;
    if (p.anchored)
      hit = glob_match_segments(p.segments, segs, 0);
    else
      hit = glob_match_segment(p.segments[0], segs.back());
    if (hit) return p.negated ? -1 : 1;
  }
  return 0;
}

bool is_ignored(const std::vector<const ignore_file*>& files, std::string_view rel_path, bool is_dir) {
  for (std::size_t i = files.size(); i-- > 0;) {
    const int m = files[i]->match(rel_path, is_dir);
    if (m != 0) return m > 0;
  }
  return false;
}

}  // namespace qf::index
