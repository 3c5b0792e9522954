// Which documents stay out of completions and prompts (docs/security.md,
// "Privacy").
//
// A document is private when its path matches a glob of privacy.exclude
// (indexing/path_glob.h: tried on the absolute path and on the path relative
// to each workspace folder that holds it) or its LSP language id is in
// privacy.disabledLanguages. The server core asks this one filter wherever a
// document's text could enter a prompt: a private document gets no
// completions, no next edits and no explanation, and its text is never
// recorded as context of other documents (open files, recent chunks, edit
// history, the workspace index), so nothing downstream (the context block,
// remote sources, explainCompletion, the audit log) can see it.
//
// A filter is immutable (its answers for URIs are remembered, thread-safely:
// every completion request asks about each open document); the core swaps in
// a new one when the settings or the workspace folders change, and hands
// snapshots to other threads.
#pragma once

#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "indexing/path_glob.h"

namespace qf::server {

// Credential and key files of common tools and cloud CLIs.
std::vector<std::string> default_privacy_exclude();

struct privacy_settings {
  std::vector<std::string> exclude = default_privacy_exclude();  // globs
  std::vector<std::string> disabled_languages;                   // LSP language ids
};

class privacy_filter {
 public:
  privacy_filter() = default;  // keeps nothing out
  privacy_filter(const privacy_filter&) = delete;
  privacy_filter& operator=(const privacy_filter&) = delete;
  // `home`: what "~/" in a pattern stands for ($HOME).
  privacy_filter(const privacy_settings& s, std::vector<std::string> workspace_roots, std::string home);

  // Why the document is private ("matches privacy.exclude pattern `.env`",
  // "language `markdown` is in privacy.disabledLanguages"), or "" when it is not.
  std::string why_private(std::string_view uri, std::string_view language_id) const;
  bool is_private(std::string_view uri, std::string_view language_id) const {
    return !why_private(uri, language_id).empty();
  }
  // A file on disk (the workspace index): an absolute path, and its language
  // id ("" when unknown).
  std::string why_private_path(std::string_view path, std::string_view language_id) const;

  const privacy_settings& settings() const { return settings_; }
  const std::vector<std::string>& roots() const { return roots_; }

 private:
  privacy_settings settings_;
  std::vector<std::string> roots_;  // absolute, without a trailing '/'
  index::path_glob_set globs_;
  mutable std::mutex memo_mu_;
  mutable std::unordered_map<std::string, std::string> memo_;  // language '\n' URI -> why_private()
};

// The path a URI names, for matching: a file URI's local path; for another
// scheme ("untitled:", "vscode-notebook-cell:/a/b.ipynb") the part after the
// scheme and authority, without query or fragment.
std::string privacy_path_of_uri(std::string_view uri);

}  // namespace qf::server
