// Internal state of qf::infer::tokenizer shared by its translation units: the vocabulary
// tables, the special-token matcher, and the BPE / SentencePiece encoders.
#pragma once

#include <array>
#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "inference/tokenizer/pretokenize.h"
#include "inference/tokenizer/tokenizer.h"

namespace qf::infer {

// Open-addressing map from a (left id, right id) pair to its merge rank and result id.
class merge_table {
 public:
  struct entry {
    uint64_t key = k_empty;
    int32_t rank = 0;
    int32_t result = 0;
  };
  static constexpr uint64_t k_empty = ~uint64_t{0};

  void reserve(size_t n);
  // Keeps the first (lowest-rank) insertion of a pair.
  void insert(int32_t left, int32_t right, int32_t rank, int32_t result);
  const entry* find(int32_t left, int32_t right) const {
    if (slots_.empty()) return nullptr;
    uint64_t key = make_key(left, right);
    size_t i = hash(key) & mask_;
    while (true) {
      const entry& e = slots_[i];
      if (e.key == key) return &e;
      if (e.key == k_empty) return nullptr;
      i = (i + 1) & mask_;
    }
  }
  size_t size() const { return size_; }

 private:
  static uint64_t make_key(int32_t l, int32_t r) {
    return (static_cast<uint64_t>(static_cast<uint32_t>(l)) << 32) | static_cast<uint32_t>(r);
  }
  static size_t hash(uint64_t k) { return static_cast<size_t>((k * 0x9E3779B97F4A7C15ull) >> 17); }
  std::vector<entry> slots_;
  size_t mask_ = 0;
  size_t size_ = 0;
};

// Open-addressing index from a token's spelling to its id; spellings stay in the
// tokenizer's token vector (the index stores only hashes and ids).
class string_index {
 public:
  void build(const std::vector<std::string>& keys);
  int32_t find(const std::vector<std::string>& keys, std::string_view s) const {
    if (slots_.empty()) return -1;
    uint64_t h = hash(s);
    auto tag = static_cast<uint32_t>(h >> 32);
    size_t i = static_cast<size_t>(h) & mask_;
    while (true) {
      const slot& e = slots_[i];
      if (e.id < 0) return -1;
      if (e.tag == tag && keys[static_cast<size_t>(e.id)] == s) return e.id;
      i = (i + 1) & mask_;
    }
  }
  static uint64_t hash(std::string_view s) {
    uint64_t h = 0xcbf29ce484222325ull;  // FNV-1a, then a final mix
    for (unsigned char c : s) h = (h ^ c) * 0x100000001b3ull;
    h ^= h >> 29;
    h *= 0xbf58476d1ce4e5b9ull;
    return h ^ (h >> 32);
  }

 private:
  struct slot {
    uint32_t tag = 0;
    int32_t id = -1;
  };
  std::vector<slot> slots_;
  size_t mask_ = 0;
};

struct tokenizer::impl {
  bool spm = false;  // "llama" model; otherwise byte-level BPE
  std::string model, pre;
  pre_type pre_t = pre_type::fallback;
  bool ignore_merges = false;  // whole word looked up first (Llama 3)

  std::vector<std::string> tokens;
  std::vector<float> scores;
  std::vector<token_type> types;
  std::vector<std::string> pieces;
  std::vector<uint8_t> eog;
  string_index token_index;  // spelling -> id (last id wins on duplicates)

  special_tokens sp;
  int32_t unk = -1;
  bool add_bos = false, add_eos = false, add_space_prefix = true;

  // Special-token spellings matched in raw text before the model runs.
  std::unordered_map<std::string_view, int32_t> specials;
  std::vector<size_t> special_lengths;  // distinct lengths, longest first
  std::array<bool, 256> special_first{};

  // Byte-level BPE.
  std::array<int32_t, 256> byte_token{};  // token of each byte's printable form (-1: none)
  merge_table merges;
  mutable std::mutex cache_mu;
  mutable std::unordered_map<std::string, std::vector<int32_t>> word_cache;

  // SentencePiece byte fallback: <0xNN> tokens.
  std::array<int32_t, 256> spm_byte_token{};

  int32_t lookup(std::string_view s) const { return token_index.find(tokens, s); }

  void build();  // derives every table from tokens/types/scores/merges
  void bpe_fragment(std::string_view text, std::vector<int32_t>& out) const;
  void bpe_word(std::string_view word, std::vector<int32_t>& out) const;
  void spm_fragment(std::string_view text, std::vector<int32_t>& out) const;
};

}  // namespace qf::infer
