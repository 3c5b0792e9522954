// Content-keyed LRU of row tokenizations, bounded by entries and bytes.
#include "server/completion/prompt/chunk_tokenizer.h"

namespace qf::server::completion {

chunk_tokenizer::chunk_tokenizer(const lm_vocab& vocab, size_t max_entries, size_t max_bytes)
    : vocab_(vocab), max_entries_(max_entries < 16 ? 16 : max_entries), max_bytes_(max_bytes) {}

const std::vector<int32_t>& chunk_tokenizer::tokens(std::string_view chunk) {
  if (auto it = map_.find(chunk); it != map_.end()) {
    ++hits_;
    lru_.splice(lru_.begin(), lru_, it->second);
    return it->second->toks;
  }
  ++misses_;
  encoded_bytes_ += static_cast<int64_t>(chunk.size());
  std::vector<int32_t> toks = vocab_.encode(chunk);
  const size_t cost = entry_bytes(chunk.size(), toks.size());
  if (cost > max_bytes_) {
    uncached_ = std::move(toks);
    return uncached_;
  }
  evict_to(max_entries_ - 1, max_bytes_ - cost);
  lru_.push_front(entry{std::string(chunk), std::move(toks)});
  bytes_ += cost;
  // The key views the list node's own string, which never moves.
  map_.emplace(std::string_view(lru_.front().text), lru_.begin());
  return lru_.front().toks;
}

void chunk_tokenizer::evict_to(size_t max_entries, size_t max_bytes) {
  while (!lru_.empty() && (lru_.size() > max_entries || bytes_ > max_bytes)) {
    const entry& e = lru_.back();
    bytes_ -= entry_bytes(e.text.size(), e.toks.size());
    map_.erase(std::string_view(e.text));
    lru_.pop_back();
  }
}

}  // namespace qf::server::completion
