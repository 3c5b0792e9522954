// API keys of the HTTP endpoint, read from a file: one key a line, blank
// lines and lines starting with '#' skipped, surrounding spaces trimmed.
// A request names its key as `Authorization: Bearer KEY` (what llama.vim,
// llama.vscode and OpenAI clients send) or `X-Api-Key: KEY`. Comparison takes
// the same time whatever the bytes; the index of the matching key scopes the
// client's buffers (fim_mapping.h). Keys are never logged or echoed.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace qf::http {

class api_keys {
 public:
  // An empty set (no file): every request is let in.
  api_keys() = default;
  // nullopt with *error when the file cannot be read or holds no key.
  static std::optional<api_keys> load(const std::string& path, std::string* error);

  bool required() const { return !keys_.empty(); }
  std::size_t size() const { return keys_.size(); }
  // The index of the key the two headers carry, or -1.
  int match(std::string_view authorization, std::string_view x_api_key) const;

 private:
  std::vector<std::string> keys_;
};

}  // namespace qf::http
