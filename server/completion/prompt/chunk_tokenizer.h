// Incremental tokenization by stable chunks.
//
// A prompt is assembled from whole rows (lines with their line break, text::find_line_break;
// see text_rows.h), and a row's tokens depend only on its text, so they are
// cached by content: after a keystroke only the edited row (and the partial
// current row) is tokenized again, not the buffer. Tokenizing row by row can
// differ from tokenizing the whole text at a row boundary (a BPE
// pre-tokenizer may merge "\n" with the next line's indentation); the model
// sees slightly different but valid tokenizations, and identical text always
// gives identical tokens, which is what the prefix cache needs.
//
// The cache is a least-recently-used map bounded twice: by entries and by
// bytes (each entry costs its text, its tokens and k_entry_overhead_bytes of
// bookkeeping). The defaults (2048 entries, 2 MiB) hold the rows of the
// prompt windows of a dozen files (a window is a few hundred rows) and are
// reached within minutes of typing, after which the cache's memory is flat;
// a chunk that alone exceeds the byte bound is tokenized but not cached.
#pragma once

#include <cstdint>
#include <list>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "server/completion/api/lm.h"

namespace qf::server::completion {

class chunk_tokenizer {
 public:
  static constexpr size_t k_default_max_entries = 2048;
  static constexpr size_t k_default_max_bytes = size_t(2) << 20;
  // List node, map node and string/vector headers of one entry (an estimate).
  static constexpr size_t k_entry_overhead_bytes = 128;

  explicit chunk_tokenizer(const lm_vocab& vocab, size_t max_entries = k_default_max_entries,
                           size_t max_bytes = k_default_max_bytes);
  // Tokens of one chunk (cached by content). The reference is valid until the next call.
  const std::vector<int32_t>& tokens(std::string_view chunk);
  // Tokens of text that is not worth caching (the partial current row).
  std::vector<int32_t> encode_uncached(std::string_view text) {
    encoded_bytes_ += static_cast<int64_t>(text.size());
    return vocab_.encode(text);
  }
  int64_t hits() const { return hits_; }
  int64_t misses() const { return misses_; }
  size_t entries() const { return lru_.size(); }
  size_t bytes() const { return bytes_; }  // what the cached entries cost, by the estimate above
  size_t max_bytes() const { return max_bytes_; }
  // Bytes of text handed to the tokenizer so far (cache misses and uncached text).
  int64_t encoded_bytes() const { return encoded_bytes_; }
  const lm_vocab& vocab() const { return vocab_; }

  static size_t entry_bytes(size_t text_bytes, size_t n_tokens) {
    return text_bytes + n_tokens * sizeof(int32_t) + k_entry_overhead_bytes;
  }

 private:
  struct entry {
    std::string text;
    std::vector<int32_t> toks;
  };
  void evict_to(size_t max_entries, size_t max_bytes);

  const lm_vocab& vocab_;
  size_t max_entries_;
  size_t max_bytes_;
  size_t bytes_ = 0;
  std::list<entry> lru_;  // front = most recent
  std::unordered_map<std::string_view, std::list<entry>::iterator> map_;
  std::vector<int32_t> uncached_;  // the last chunk too large to cache
  int64_t hits_ = 0, misses_ = 0, encoded_bytes_ = 0;
};

}  // namespace qf::server::completion
