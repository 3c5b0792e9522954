// .gitignore patterns (the gitignore(5) rules the workspace walk needs).
//
// One ignore_file holds the patterns of one .gitignore (or .git/info/exclude)
// with the directory it applies to, relative to the walk's root ("" for the
// root). Supported: comments, blank lines, trailing-space trimming, `\`
// escapes, `!` negation, a trailing `/` (directories only), anchoring by a
// leading or inner `/`, `*`, `?`, `[...]` classes (with `!`/`^` negation and
// ranges) and `**` as a whole segment (leading `**/`, trailing `/**`, inner
// `/**/`). Matching is iterative (no recursion), so a hostile pattern costs
// time bounded by its length times the path's, never stack.
//
// Precedence is git's: across the files that apply to a path (outer to
// inner), the last matching pattern decides; a negated one re-includes.
// Paths inside an ignored directory are never reached by the walk, so they
// cannot be re-included, as in git.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace qf::index {

struct ignore_pattern {
  std::vector<std::string> segments;  // the pattern split at '/'
  bool negated = false;
  bool directory_only = false;
  bool anchored = false;  // matches the whole path below the base, not any basename
};

class ignore_file {
 public:
  ignore_file() = default;
  // `base`: the directory of the file relative to the root, "" or "a/b".
  ignore_file(std::string base, std::string_view contents);

  const std::string& base() const { return base_; }
  bool empty() const { return patterns_.empty(); }
  // For `rel_path` (relative to the root, '/'-separated): 1 ignored, -1
  // re-included by a negated pattern, 0 no pattern of this file matches.
  int match(std::string_view rel_path, bool is_dir) const;

 private:
  std::string base_;
  std::vector<ignore_pattern> patterns_;
};

// The decision over a stack of files, outer first: true when ignored.
bool is_ignored(const std::vector<const ignore_file*>& files, std::string_view rel_path, bool is_dir);

// One glob segment (no '/') against one path segment: `*`, `?`, `[...]`, `\x`.
bool glob_match_segment(std::string_view pattern, std::string_view text);
// A pattern split at '/' against a path's segments from `from` on: each
// pattern segment matches one path segment, and a `**` segment any run of
// them (also none). Shared with path_glob.h.
bool glob_match_segments(const std::vector<std::string>& pattern, const std::vector<std::string_view>& path,
                         std::size_t from = 0);
// A '/'-separated path's non-empty segments.
std::vector<std::string_view> split_path_segments(std::string_view path);

}  // namespace qf::index
