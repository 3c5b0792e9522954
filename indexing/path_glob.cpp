// Path globs (see path_glob.h).
#include "indexing/path_glob.h"

#include "indexing/gitignore.h"

namespace qf::index {

namespace {

constexpr std::size_t max_pattern = 4096;  // longer patterns are not globs anyone writes

}  // namespace

path_glob_set::path_glob_set(const std::vector<std::string>& patterns, std::string_view home) {
  for (const std::string& written : patterns) {
    if (written.empty() || written.size() > max_pattern) continue;
    std::string text = written;
    if (text == "~" || text.starts_with("~/")) {
      if (home.empty() || home.front() != '/') continue;
      text = std::string(home) + text.substr(1);
    }
    glob g;
    g.text = written;
    std::string_view line = text;
    if (line.back() == '/') {
      g.directory_only = true;
      while (!line.empty() && line.back() == '/') line.remove_suffix(1);
    }
    if (line.empty()) continue;
    g.anchored = line.find('/') != std::string_view::npos;
    for (std::string_view s : split_path_segments(line)) g.segments.emplace_back(s);
    if (g.segments.empty()) continue;
    // "x/**" matches what is inside x, not x itself (as in gitignore.cpp).
    if (g.segments.size() > 1 && g.segments.back() == "**") g.segments.insert(g.segments.end() - 1, "*");
    globs_.push_back(std::move(g));
  }
}

const std::string* path_glob_set::match(std::string_view path) const {
  const std::vector<std::string_view> segs = split_path_segments(path);
  if (segs.empty()) return nullptr;
  const std::size_t n = segs.size();
  for (const glob& g : globs_) {
    if (!g.anchored) {
      // The file itself or any directory above it.
      for (std::size_t i = 0; i < n; ++i) {
        if (g.directory_only && i + 1 == n) break;
        if (glob_match_segment(g.segments[0], segs[i])) return &g.text;
      }
      continue;
    }
    // The whole path, or a directory above it (everything below a match is matched).
    std::vector<std::string_view> prefix;
    prefix.reserve(n);
    for (std::size_t k = 0; k < n; ++k) {
      prefix.push_back(segs[k]);
      if (g.directory_only && k + 1 == n) break;
      if (glob_match_segments(g.segments, prefix)) return &g.text;
    }
  }
  return nullptr;
}

}  // namespace qf::index
