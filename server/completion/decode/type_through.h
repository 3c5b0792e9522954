// Type-through: when the user types the characters the last suggestion
// proposed, the rest of that suggestion is still right; answer it at once
// without the model. The cache remembers, per document, the text the
// suggestion was made for, the cursor offset and the suggested text; a new
// request hits when its document equals the remembered one with a prefix of
// the suggestion inserted at the remembered cursor (and the cursor right after
// it). Only typing on the cursor line is followed.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

#include "indexing/shared_text.h"

namespace qf::server::completion {

class type_through_cache {
 public:
  // Remembers `suggestion` offered at byte offset `cursor` of `text`.
  // `kept`: made by a generation that outlived its request (inflight.h).
  void remember(const std::string& uri, const index::shared_text& text, size_t cursor, std::string suggestion,
                bool kept = false);
  // The rest of the suggestion when `text` with the cursor at `cursor` is the
  // remembered text with a prefix of the suggestion typed; nullopt otherwise
  // (also when nothing would be left). A hit moves the entry forward.
  // `kept` (optional) says whether the hit's suggestion was remembered as kept.
  std::optional<std::string> lookup(const std::string& uri, const index::shared_text& text, size_t cursor,
                                    bool* kept = nullptr);
  void forget(const std::string& uri) { entries_.erase(uri); }
  void clear() { entries_.clear(); }

 private:
  struct entry {
    index::shared_text text;  // shared with the request, not copied
    size_t cursor = 0;
    std::string suggestion;
    bool kept = false;
  };
  std::unordered_map<std::string, entry> entries_;
};

}  // namespace qf::server::completion
