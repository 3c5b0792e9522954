// SentencePiece-style encoding (tokenizer.ggml.model = "llama"), as llama.cpp's SPM
// tokenizer does it: the text (spaces already replaced by U+2581 and, for the first
// fragment, a dummy space prefix added by the caller) is split into UTF-8 characters;
// the adjacent pair whose concatenation is a token with the highest score is merged,
// leftmost first on ties, until no pair forms a token. Symbols that are not tokens are
// emitted as <0xNN> byte tokens (byte fallback), or the unknown token without them.
#include <queue>

#include "inference/tokenizer/tokenizer_impl.h"
#include "inference/tokenizer/unicode.h"

namespace qf::infer {

void tokenizer::impl::spm_fragment(std::string_view text, std::vector<int32_t>& out) const {
  struct sym {
    uint32_t off, len;
    int32_t prev, next;
  };
  struct bigram {
    float score;
    int32_t left, right;
    uint32_t len;
  };
  struct lower_priority {
    bool operator()(const bigram& a, const bigram& b) const {
      return a.score < b.score || (a.score == b.score && a.left > b.left);
    }
  };
  std::vector<sym> syms;
  syms.reserve(text.size());
  for (size_t off = 0; off < text.size();) {
    size_t len = std::min(unicode::utf8_seq_len(static_cast<uint8_t>(text[off])), text.size() - off);
    int32_t idx = static_cast<int32_t>(syms.size());
    syms.push_back(sym{static_cast<uint32_t>(off), static_cast<uint32_t>(len), idx - 1,
                       off + len == text.size() ? -1 : idx + 1});
    off += len;
  }
  if (syms.empty()) return;

  std::priority_queue<bigram, std::vector<bigram>, lower_priority> q;
  auto try_add = [&](int32_t l, int32_t r) {
    if (l < 0 || r < 0) return;
    std::string_view s = text.substr(syms[l].off, syms[l].len + syms[r].len);
    int32_t id = lookup(s);
    if (id < 0) return;
    q.push(bigram{scores.empty() ? 0.0f : scores[id], l, r, static_cast<uint32_t>(s.size())});
  };
  for (int32_t i = 1; i < static_cast<int32_t>(syms.size()); ++i) try_add(i - 1, i);
  while (!q.empty()) {
    bigram b = q.top();
    q.pop();
    sym& l = syms[b.left];
    sym& r = syms[b.right];
    if (l.len == 0 || r.len == 0 || l.len + r.len != b.len || l.next != b.right) continue;
    l.len += r.len;
    r.len = 0;
    l.next = r.next;
    if (r.next >= 0) syms[r.next].prev = b.left;
    try_add(l.prev, b.left);
    try_add(b.left, l.next);
  }
  for (int32_t i = 0; i >= 0; i = syms[i].next) {
    std::string_view s = text.substr(syms[i].off, syms[i].len);
    if (int32_t id = lookup(s); id >= 0) {
      out.push_back(id);
      continue;
    }
    for (char ch : s) {
      int32_t id = spm_byte_token[static_cast<uint8_t>(ch)];
      if (id < 0) id = unk;
      if (id >= 0) out.push_back(id);
    }
  }
}

}  // namespace qf::infer
