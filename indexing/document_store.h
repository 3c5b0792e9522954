// The open documents, keyed by URI, with a most-recently-used order.
//
// Readers get immutable snapshots (shared_ptr<const document>): an edit builds
// a new document and swaps it in, so a completion job keeps reading the text
// it was started on while the user types on. All members are thread-safe.
// The MRU order (touched on open, change and completion) chooses which other
// documents feed repository-level context.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "indexing/document.h"

namespace qf::index {

class document_store {
 public:
  using snapshot = std::shared_ptr<const document>;

  // Opens (or re-opens, replacing) a document.
  void open(const std::string& uri, const std::string& language_id, std::int64_t version, std::string text);
  // Applies a didChange batch. False (with *error) when the document is not
  // open or an edit is malformed; the stored text is then unchanged.
  bool change(const std::string& uri, std::int64_t version, const std::vector<text_change>& changes,
              position_encoding enc, std::string* error);
  bool close(const std::string& uri);
  snapshot get(const std::string& uri) const;
  void touch(const std::string& uri);
  // Open documents other than `exclude`, most recently used first, at most `limit`.
  std::vector<snapshot> recent(const std::string& exclude, std::size_t limit) const;
  std::size_t size() const;

 private:
  struct entry {
    snapshot doc;
    std::uint64_t last_used = 0;
  };
  mutable std::mutex mu_;
  std::unordered_map<std::string, entry> docs_;
  std::uint64_t clock_ = 0;
};

}  // namespace qf::index
