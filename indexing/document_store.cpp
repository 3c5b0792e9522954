// Open documents: snapshots, MRU order, limits and sync state (see document_store.h).
#include "indexing/document_store.h"

#include <algorithm>

#include "text/utf8.h"

namespace qf::index {

namespace {

std::string bytes_text(std::size_t bytes) { return std::to_string(bytes) + " bytes"; }

}  // namespace

void document_store::set_entry(const std::string& uri, entry e) {
  auto it = docs_.find(uri);
  if (it != docs_.end()) {
    total_bytes_ -= it->second.doc->text.size();
    total_bytes_ += e.doc->text.size();
    it->second = std::move(e);
    return;
  }
  total_bytes_ += e.doc->text.size();
  docs_.emplace(uri, std::move(e));
}

void document_store::drop_entry(const std::string& uri) {
  auto it = docs_.find(uri);
  if (it == docs_.end()) return;
  total_bytes_ -= it->second.doc->text.size();
  docs_.erase(it);
}

bool document_store::open(const std::string& uri, const std::string& language_id, std::int64_t version,
                          std::string text, std::string* error) {
  const std::size_t bytes = text.size();
  std::lock_guard<std::mutex> lock(mu_);
  auto it = docs_.find(uri);
  const std::size_t others_bytes = total_bytes_ - (it != docs_.end() ? it->second.doc->text.size() : 0);
  const std::size_t others_count = docs_.size() - (it != docs_.end() ? 1 : 0);
  std::string why;
  if (others_count + 1 > limits_.max_documents)
    why = "opening it would make " + std::to_string(others_count + 1) + " open documents, over the limit of " +
          std::to_string(limits_.max_documents);
  else if (others_bytes + bytes > limits_.max_total_bytes)
    why = "its " + bytes_text(bytes) + " would make " + bytes_text(others_bytes + bytes) +
          " of open documents, over the limit of " + bytes_text(limits_.max_total_bytes);
  if (!why.empty()) {
    drop_entry(uri);
    not_tracked_[uri] = why;
    if (error) *error = why;
    return false;
  }
  not_tracked_.erase(uri);
  text::repair_utf8_in_place(text);  // JSON text always is valid; other callers get the same guarantee
  auto doc = std::make_shared<const document>(uri, language_id, version, std::move(text));
  set_entry(uri, entry{std::move(doc), ++clock_, false, {}});
  return true;
}

bool document_store::change(const std::string& uri, std::int64_t version, const std::vector<text_change>& changes,
                            text::position_encoding enc, std::string* error) {
  entry current;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = docs_.find(uri);
    if (it == docs_.end()) {
      if (error) {
        auto nt = not_tracked_.find(uri);
        *error = nt != not_tracked_.end() ? "document is not tracked (" + nt->second + ")"
                                          : "document is not open: " + uri;
      }
      return false;
    }
    current = it->second;
  }
  // From the last full-text change on, the batch does not depend on the
  // stored text: it re-syncs a stale document and makes the version moot.
  std::size_t first = 0;
  bool full_text = false;
  for (std::size_t i = 0; i < changes.size(); ++i)
    if (!changes[i].range) {
      first = i;
      full_text = true;
    }
  if (!full_text && version <= current.doc->version) {
    const std::string why = "version " + std::to_string(version) + " is not greater than the stored version " +
                            std::to_string(current.doc->version) + "; the change was ignored";
    mark_stale(uri, why);
    if (error) *error = why;
    return false;
  }
  // Edits are applied outside the lock; only the dispatcher thread changes
  // documents, so no other writer can interleave.
  auto next = std::make_shared<document>(*current.doc);
  std::string why;
  for (std::size_t i = first; i < changes.size(); ++i) {
    std::string problem;
    if (!apply_change(next->text, next->lines, changes[i], enc, &problem)) {
      why = "change " + std::to_string(i) + ": " + problem;
      mark_stale(uri, "a change could not be applied: " + why);
      if (error) *error = why;
      return false;
    }
  }
  next->version = version;
  std::lock_guard<std::mutex> lock(mu_);
  auto it = docs_.find(uri);
  if (it == docs_.end()) {
    if (error) *error = "document was closed during the change: " + uri;
    return false;
  }
  const std::size_t others = total_bytes_ - it->second.doc->text.size();
  if (others + next->text.size() > limits_.max_total_bytes) {
    why = "the change would make " + bytes_text(others + next->text.size()) + " of open documents, over the limit of " +
          bytes_text(limits_.max_total_bytes);
    drop_entry(uri);
    not_tracked_[uri] = why;
    if (error) *error = why;
    return false;
  }
  entry e{std::move(next), ++clock_, it->second.stale && !full_text, full_text ? std::string() : it->second.stale_reason};
  set_entry(uri, std::move(e));
  return true;
}

bool document_store::mark_stale(const std::string& uri, const std::string& reason) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = docs_.find(uri);
  if (it == docs_.end()) return false;
  if (!it->second.stale) {
    it->second.stale = true;
    it->second.stale_reason = reason;
  }
  return true;
}

std::size_t document_store::mark_all_stale(const std::string& reason) {
  std::lock_guard<std::mutex> lock(mu_);
  std::size_t n = 0;
  for (auto& [uri, e] : docs_) {
    if (e.stale) continue;
    e.stale = true;
    e.stale_reason = reason;
    ++n;
  }
  return n;
}

void document_store::mark_not_tracked(const std::string& uri, const std::string& reason) {
  std::lock_guard<std::mutex> lock(mu_);
  drop_entry(uri);
  not_tracked_[uri] = reason;
}

bool document_store::close(const std::string& uri) {
  std::lock_guard<std::mutex> lock(mu_);
  const bool was_open = docs_.count(uri) != 0;
  drop_entry(uri);
  const bool was_not_tracked = not_tracked_.erase(uri) != 0;
  return was_open || was_not_tracked;
}

document_store::snapshot document_store::get(const std::string& uri) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = docs_.find(uri);
  return it == docs_.end() ? nullptr : it->second.doc;
}

document_store::lookup_result document_store::lookup(const std::string& uri) const {
  std::lock_guard<std::mutex> lock(mu_);
  lookup_result r;
  if (auto it = docs_.find(uri); it != docs_.end()) {
    r.doc = it->second.doc;
    r.state = it->second.stale ? doc_state::stale : doc_state::open;
    r.reason = it->second.stale_reason;
  } else if (auto nt = not_tracked_.find(uri); nt != not_tracked_.end()) {
    r.state = doc_state::not_tracked;
    r.reason = nt->second;
  }
  return r;
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
      if (uri != exclude && !e.stale) all.emplace_back(e.last_used, e.doc);
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

std::size_t document_store::total_bytes() const {
  std::lock_guard<std::mutex> lock(mu_);
  return total_bytes_;
}

std::size_t document_store::stale_count() const {
  std::lock_guard<std::mutex> lock(mu_);
  return static_cast<std::size_t>(std::count_if(docs_.begin(), docs_.end(), [](const auto& kv) { return kv.second.stale; }));
}

}  // namespace qf::index
