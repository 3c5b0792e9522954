// The open documents, keyed by URI, with a most-recently-used order, limits,
// and a record of documents that are out of sync with the editor.
//
// Readers get immutable snapshots (shared_ptr<const document>): an edit builds
// a new document and swaps it in, so a completion job keeps reading the text
// it was started on while the user types on; requests share the snapshot's
// text rather than copying it (shared_text.h). All members are thread-safe.
// The MRU order (touched on open, change and completion) chooses which other
// documents feed repository-level context.
//
// States of a URI (lookup()):
//  * open: the text is the editor's.
//  * stale: a change could not be applied (a bad range, a version that is not
//    greater than the stored one, a message that was lost). The last good
//    text is kept and later incremental edits still apply to it, but it no
//    longer matches the editor, so requests on it must fail; a didOpen or a
//    change batch holding a full-text change brings it back in sync.
//  * not_tracked: a didOpen (or a change) would have gone past the limits;
//    no text is kept until didClose and a new didOpen.
//  * not_open.
// Limits (store_limits): at most max_documents documents and max_total_bytes
// bytes of text in all.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "indexing/document.h"

namespace qf::index {

struct store_limits {
  std::size_t max_documents = 1000;
  std::size_t max_total_bytes = std::size_t{256} << 20;  // 256 MiB
};

enum class doc_state { open, stale, not_tracked, not_open };

class document_store {
 public:
  using snapshot = std::shared_ptr<const document>;

  struct lookup_result {
    snapshot doc;        // open or stale: the stored text
    doc_state state = doc_state::not_open;
    std::string reason;  // stale, not_tracked: why
  };

  explicit document_store(store_limits limits = {}) : limits_(limits) {}

  // Opens (or re-opens, replacing) a document; it is in sync afterwards. False
  // (with *error) when a limit refuses it: the URI is then not tracked.
  bool open(const std::string& uri, const std::string& language_id, std::int64_t version, std::string text,
            std::string* error = nullptr);
  // Applies a didChange batch; true when it was applied to the stored text.
  // False (with *error) when the document is not open or not tracked, when an
  // edit is malformed (text unchanged, document stale), when `version` is not
  // greater than the stored one and the batch has no full-text change
  // (ignored, document stale), or when the new text would pass the byte limit
  // (document not tracked). A full-text change clears a stale mark.
  bool change(const std::string& uri, std::int64_t version, const std::vector<text_change>& changes,
              text::position_encoding enc, std::string* error);
  // Marks an open document stale; false when it is not open.
  bool mark_stale(const std::string& uri, const std::string& reason);
  // Marks every open document stale; returns how many were newly marked.
  std::size_t mark_all_stale(const std::string& reason);
  // Stops tracking a document (open or not) with a reason, as a refused didOpen does.
  void mark_not_tracked(const std::string& uri, const std::string& reason);
  // Closes an open document or forgets a not-tracked one.
  bool close(const std::string& uri);

  // The stored text (also when stale); nullptr when not open.
  snapshot get(const std::string& uri) const;
  lookup_result lookup(const std::string& uri) const;
  void touch(const std::string& uri);
  // Documents in sync other than `exclude`, most recently used first, at most `limit`.
  std::vector<snapshot> recent(const std::string& exclude, std::size_t limit) const;
  std::size_t size() const;         // open documents (stale ones included)
  std::size_t total_bytes() const;  // their text
  std::size_t stale_count() const;
  const store_limits& limits() const { return limits_; }

 private:
  struct entry {
    snapshot doc;
    std::uint64_t last_used = 0;
    bool stale = false;
    std::string stale_reason;
  };
  void set_entry(const std::string& uri, entry e);  // with the lock held; keeps total_bytes_
  void drop_entry(const std::string& uri);          // with the lock held

  store_limits limits_;
  mutable std::mutex mu_;
  std::unordered_map<std::string, entry> docs_;
  std::unordered_map<std::string, std::string> not_tracked_;  // URI -> why
  std::size_t total_bytes_ = 0;
  std::uint64_t clock_ = 0;
};

}  // namespace qf::index
