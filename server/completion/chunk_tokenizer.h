// Incremental tokenization by stable chunks.
//
// A prompt is assembled from whole lines (each with its line break,
// index::split_lines), and a line's
// tokens depend only on its text, so they are cached by content: after a
// keystroke only the edited line (and the partial current line) is tokenized
// again, not the buffer. Tokenizing line by line can differ from tokenizing the
// whole text at a line boundary (a BPE pre-tokenizer may merge "\n" with the
// next line's indentation); the model sees slightly different but valid
// tokenizations, and identical text always gives identical tokens, which is
// what the prefix cache needs.
#pragma once

#include <cstdint>
#include <list>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "server/completion/lm.h"

namespace qf::server::completion {

class chunk_tokenizer {
 public:
  explicit chunk_tokenizer(const lm_vocab& vocab, size_t max_entries = 16384);
  // Tokens of one chunk (cached by content).
  const std::vector<int32_t>& tokens(std::string_view chunk);
  // Tokens of text that is not worth caching (the partial current line).
  std::vector<int32_t> encode_uncached(std::string_view text) const { return vocab_.encode(text); }
  int64_t hits() const { return hits_; }
  int64_t misses() const { return misses_; }
  const lm_vocab& vocab() const { return vocab_; }

 private:
  struct entry {
    std::string text;
    std::vector<int32_t> toks;
  };
  const lm_vocab& vocab_;
  size_t max_entries_;
  std::list<entry> lru_;  // front = most recent
  std::unordered_map<std::string_view, std::list<entry>::iterator> map_;
  int64_t hits_ = 0, misses_ = 0;
};

}  // namespace qf::server::completion
