// Open documents with snapshots and MRU order (see document_store.h).
#include "indexing/document_store.h"

#include <algorithm>

namespace qf::index {

void document_store::open(const std::string& uri, const std::string& language_id, std::int64_t version,
                          std::string text) {
  auto doc = std::make_shared<const document>(uri, language_id, version, std::move(text));
  std::lock_guard<std::mutex> lock(mu_);
  docs_[uri] = entry{std::move(doc), ++clock_};
}

bool document_store::change(const std::string& uri, std::int64_t version, const std::vector<text_change>& changes,
                            position_encoding enc, std::string* error) {
  snapshot current;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = docs_.find(uri);
    if (it == docs_.end()) {
      if (error) *error = "document is not open: " + uri;
      return false;
    }
    current = it->second.doc;
  }
  // Edits are applied outside the lock; only the dispatcher thread changes
  // documents, so no other writer can interleave.
  auto next = std::make_shared<document>(*current);
  if (!next->apply(changes, enc, error)) return false;
  next->version = version;
  std::lock_guard<std::mutex> lock(mu_);
  auto it = docs_.find(uri);
  if (it == docs_.end()) {
    if (error) *error = "document was closed during the change: " + uri;
    return false;
  }
  it->second = entry{std::move(next), ++clock_};
  return true;
}

bool document_store::close(const std::string& uri) {
  std::lock_guard<std::mutex> lock(mu_);
  return docs_.erase(uri) != 0;
}

document_store::snapshot document_store::get(const std::string& uri) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = docs_.find(uri);
  return it == docs_.end() ? nullptr : it->second.doc;
}

void document_store::touch(const std::string& uri) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = docs_.find(uri);
  if (it != docs_.end()) it->second.last_used = ++clock_;
}

std::vector<document_store::snapshot> document_store::recent(const std::string& exclude, std::size_t limit) const {
  std::vector<std::pair<std::uint64_t, snapshot>> all;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (const auto& [uri, e] : docs_)
      if (uri != exclude) all.emplace_back(e.last_used, e.doc);
  }
  std::sort(all.begin(), all.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  std::vector<snapshot> out;
  for (std::size_t i = 0; i < all.size() && i < limit; ++i) out.push_back(std::move(all[i].second));
  return out;
}

std::size_t document_store::size() const {
  std::lock_guard<std::mutex> lock(mu_);
  return docs_.size();
}

}  // namespace qf::index
