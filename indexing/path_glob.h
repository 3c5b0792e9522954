// Path globs for excluding files from everything a prompt is made of
// (the privacy.exclude setting, docs/security.md "Privacy").
//
// The syntax and matching are gitignore's (gitignore.h), without its file
// syntax: no comments and no `!` negation (a list of globs can only add
// exclusions). `*`, `?` and `[...]` match within one path segment, `**` as a
// whole segment spans any number of directories. A pattern without '/' (other
// than a trailing one) is a basename pattern and matches a file or a
// directory of that name at any depth: `.env`, `*.pem`, `id_rsa*`. A pattern
// with '/' is anchored: it matches the whole path from the start (a leading
// '/' is dropped; `**/` at the start floats it). A pattern that matches a
// directory matches everything below it; a trailing '/' matches directories
// only. `~/` at the start stands for $HOME (and anchors at the root).
//
// A path is matched as given, '/'-separated: an absolute path ("/home/u/p/.env")
// or one relative to a workspace folder ("p/.env"); the caller tries each form.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace qf::index {

class path_glob_set {
 public:
  path_glob_set() = default;
  // `home` replaces a leading "~/" ("" leaves such a pattern matching nothing).
  explicit path_glob_set(const std::vector<std::string>& patterns, std::string_view home = {});

  bool empty() const { return globs_.empty(); }
  // The first pattern (as written) that matches `path`, or null.
  const std::string* match(std::string_view path) const;

 private:
  struct glob {
    std::string text;                   // as written
    std::vector<std::string> segments;  // split at '/'
    bool anchored = false;
    bool directory_only = false;
  };
  std::vector<glob> globs_;
};

}  // namespace qf::index
