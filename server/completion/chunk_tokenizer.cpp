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

std::vector<std::string_view> split_lines(std::string_view text) {
  std::vector<std::string_view> lines;
  size_t start = 0;
  while (start < text.size()) {
    size_t nl = text.find('\n', start);
    if (nl == std::string_view::npos) {
      lines.push_back(text.substr(start));
      return lines;
    }
    lines.push_back(text.substr(start, nl + 1 - start));
    start = nl + 1;
  }
  if (lines.empty() || text.back() == '\n') lines.push_back(std::string_view(text.data() + text.size(), 0));
  return lines;
}

}  // namespace qf::server::completion
