// Content-keyed LRU of line tokenizations.
#include "server/completion/chunk_tokenizer.h"

namespace qf::server::completion {

chunk_tokenizer::chunk_tokenizer(const lm_vocab& vocab, size_t max_entries)
    : vocab_(vocab), max_entries_(max_entries < 16 ? 16 : max_entries) {}

const std::vector<int32_t>& chunk_tokenizer::tokens(std::string_view chunk) {
  if (auto it = map_.find(chunk); it != map_.end()) {
    ++hits_;
    lru_.splice(lru_.begin(), lru_, it->second);
    return it->second->toks;
  }
  ++misses_;
  lru_.push_front(entry{std::string(chunk), vocab_.encode(chunk)});
  // The key views the list node's own string, which never moves.
  map_.emplace(std::string_view(lru_.front().text), lru_.begin());
  while (lru_.size() > max_entries_) {
    map_.erase(std::string_view(lru_.back().text));
    lru_.pop_back();
  }
  return lru_.front().toks;
}

}  // namespace qf::server::completion
