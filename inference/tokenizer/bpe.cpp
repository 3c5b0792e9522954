// Byte-level BPE (tokenizer.ggml.model = "gpt2"): each pre-tokenized word becomes one
// symbol per byte (the token of the byte's printable stand-in), then the adjacent pair
// with the lowest merge rank is merged, leftmost first, until no pair has a rank. This
// is the order of llama.cpp's bigram queue. Short words use a plain scan; long ones a
// heap over a linked list. Results of repeated words are cached.
#include <algorithm>
#include <climits>
#include <queue>

#include "inference/tokenizer/tokenizer_impl.h"
#include "inference/tokenizer/unicode.h"
#include "text/utf8.h"

namespace qf::infer {

void merge_table::reserve(size_t n) {
  size_t cap = 16;
  while (cap < n * 2) cap <<= 1;
  slots_.assign(cap, entry{});
  mask_ = cap - 1;
  size_ = 0;
}

void merge_table::insert(int32_t left, int32_t right, int32_t rank, int32_t result) {
  uint64_t key = make_key(left, right);
  size_t i = hash(key) & mask_;
  while (slots_[i].key != k_empty) {
    if (slots_[i].key == key) return;
    i = (i + 1) & mask_;
  }
  slots_[i] = entry{key, rank, result};
  ++size_;
}

namespace {

constexpr size_t k_scan_limit = 48;    // words up to this many bytes use the plain scan
constexpr size_t k_cache_words = 1 << 16;  // cache cleared when it grows past this
constexpr size_t k_cache_max_len = 64;     // longer words are not cached

void merge_scan(const merge_table& mt, std::vector<int32_t>& s) {
  while (s.size() > 1) {
    int32_t best_rank = INT32_MAX;
    size_t best = 0;
    int32_t best_result = -1;
    for (size_t i = 0; i + 1 < s.size(); ++i) {
      const auto* e = mt.find(s[i], s[i + 1]);
      if (e && e->rank < best_rank) {
        best_rank = e->rank;
        best = i;
        best_result = e->result;
      }
    }
    if (best_result < 0) break;
    s[best] = best_result;
    s.erase(s.begin() + static_cast<std::ptrdiff_t>(best) + 1);
  }
}

void merge_heap(const merge_table& mt, std::vector<int32_t>& s) {
  struct node {
    int32_t id, prev, next;
  };
  struct cand {
    int32_t rank, left, lid, rid;
    bool operator>(const cand& o) const { return rank != o.rank ? rank > o.rank : left > o.left; }
  };
  const int32_t n = static_cast<int32_t>(s.size());
  std::vector<node> nodes(static_cast<size_t>(n));
  for (int32_t i = 0; i < n; ++i) nodes[i] = node{s[i], i - 1, i + 1 < n ? i + 1 : -1};
  std::priority_queue<cand, std::vector<cand>, std::greater<>> q;
  auto consider = [&](int32_t l) {
    if (l < 0) return;
    int32_t r = nodes[l].next;
    if (r < 0) return;
    if (const auto* e = mt.find(nodes[l].id, nodes[r].id)) q.push(cand{e->rank, l, nodes[l].id, nodes[r].id});
  };
  for (int32_t i = 0; i + 1 < n; ++i) consider(i);
  constexpr int32_t dead = -2;
  while (!q.empty()) {
    cand c = q.top();
    q.pop();
    node& l = nodes[c.left];
    if (l.id != c.lid || l.next < 0 || nodes[l.next].id != c.rid) continue;
    const auto* e = mt.find(c.lid, c.rid);
    int32_t r = l.next;
    l.id = e->result;
    l.next = nodes[r].next;
    if (l.next >= 0) nodes[l.next].prev = c.left;
    nodes[r].id = dead;
    consider(l.prev);
    consider(c.left);
  }
  s.clear();
  for (int32_t i = 0; i >= 0; i = nodes[i].next) s.push_back(nodes[i].id);
}

}  // namespace

void tokenizer::impl::bpe_word(std::string_view word, std::vector<int32_t>& out) const {
  if (ignore_merges) {
    std::string enc;
    enc.reserve(word.size() * 2);
    for (char ch : word) enc += unicode::byte_to_utf8(static_cast<uint8_t>(ch));
    if (int32_t id = lookup(enc); id >= 0) {
      out.push_back(id);
      return;
    }
  }
  const bool cacheable = word.size() <= k_cache_max_len;
  if (cacheable) {
    std::lock_guard lk(cache_mu);
    auto it = word_cache.find(std::string(word));
    if (it != word_cache.end()) {
      out.insert(out.end(), it->second.begin(), it->second.end());
      return;
    }
  }
  thread_local std::vector<int32_t> s;
  s.clear();
  for (char ch : word) s.push_back(byte_token[static_cast<uint8_t>(ch)]);
  if (s.size() <= k_scan_limit) merge_scan(merges, s);
  else merge_heap(merges, s);
  // A byte without a token of its own cannot be represented: it is dropped.
  s.erase(std::remove(s.begin(), s.end(), -1), s.end());
  out.insert(out.end(), s.begin(), s.end());
  if (cacheable) {
    std::lock_guard lk(cache_mu);
    if (word_cache.size() >= k_cache_words) word_cache.clear();
    word_cache.emplace(std::string(word), s);
  }
}

void tokenizer::impl::bpe_fragment(std::string_view text, std::vector<int32_t>& out) const {
  thread_local std::vector<std::string_view> words;
  words.clear();
  std::string clean;
  if (!text::is_valid_utf8(text)) {
    clean = text::repair_utf8(text);
    text = clean;
  }
  pretokenize(pre_t, text, words);
  for (std::string_view w : words) bpe_word(w, out);
}

}  // namespace qf::infer
