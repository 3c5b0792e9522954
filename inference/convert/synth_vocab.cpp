// Synthetic byte-level BPE vocabulary (see synth_vocab.h).
#include "inference/convert/synth_vocab.h"

#include <stdexcept>
#include <string>
#include <unordered_set>

#include "inference/convert/token_type.h"
#include "text/utf8.h"

namespace qf::infer::convert {
namespace {

// GPT-2's reversible byte -> printable code point map, in its list order.
std::vector<std::pair<int, uint32_t>> byte_order() {
  std::vector<std::pair<int, uint32_t>> out;
  std::vector<bool> printable(256, false);
  for (int b = 33; b <= 126; ++b) printable[b] = true;
  for (int b = 161; b <= 172; ++b) printable[b] = true;
  for (int b = 174; b <= 255; ++b) printable[b] = true;
  for (int b = 0; b < 256; ++b)
    if (printable[b]) out.emplace_back(b, static_cast<uint32_t>(b));
  uint32_t n = 0;
  for (int b = 0; b < 256; ++b)
    if (!printable[b]) out.emplace_back(b, 256 + n++);
  return out;
}

struct rng {
  uint64_t s;
  uint64_t next() {  // splitmix64
    uint64_t z = (s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  size_t below(size_t n) { return static_cast<size_t>(next() % n); }
};

const char* const k_specials[] = {
    "<|endoftext|>", "<|im_start|>", "<|im_end|>", "<|object_ref_start|>", "<|object_ref_end|>",
    "<|box_start|>", "<|box_end|>", "<|quad_start|>", "<|quad_end|>", "<|vision_start|>",
    "<|vision_end|>", "<|vision_pad|>", "<|image_pad|>", "<|video_pad|>", "<tool_call>",
    "</tool_call>", "<|fim_prefix|>", "<|fim_middle|>", "<|fim_suffix|>", "<|fim_pad|>",
    "<|repo_name|>", "<|file_sep|>"};
constexpr int64_t k_n_specials = sizeof(k_specials) / sizeof(k_specials[0]);
constexpr int64_t k_qwen_first_special = 151643;

}  // namespace

synth_vocab make_synth_vocab(int64_t n_vocab, uint64_t seed) {
  if (n_vocab < 512 || n_vocab > (int64_t{1} << 24))
    throw std::invalid_argument("synthetic vocabulary size must be in 512..16777216, not " +
                                std::to_string(n_vocab));
  const bool qwen_layout = n_vocab >= k_qwen_first_special + k_n_specials;
  const int64_t n_normal = qwen_layout ? k_qwen_first_special : n_vocab - k_n_specials;

  synth_vocab v;
  v.tokens.reserve(static_cast<size_t>(n_vocab));
  std::unordered_set<std::string> seen;
  seen.reserve(static_cast<size_t>(n_normal) * 2);
  for (auto [b, cp] : byte_order()) {
    std::string t;
    text::append_utf8(t, cp);
    v.tokens.push_back(t);
    v.types.push_back(tt_normal);
    seen.insert(t);
  }

  // Characters that extend words; U+0120 ('Ġ', a space) only starts tokens.
  std::vector<std::string> letters;
  for (int rep = 0; rep < 4; ++rep)  // lower case four times as likely
    for (char c = 'a'; c <= 'z'; ++c) letters.emplace_back(1, c);
  for (char c = 'A'; c <= 'Z'; ++c) letters.emplace_back(1, c);
  for (char c = '0'; c <= '9'; ++c) letters.emplace_back(1, c);
  for (char c : std::string("_.,;:()[]{}=+-*/<>'\"")) letters.emplace_back(1, c);
  const std::string space = "\xC4\xA0";    // U+0120
  const std::string newline = "\xC4\x8A";  // U+010A
  std::vector<size_t> starts;              // indices of tokens that may grow
  for (const char* s : {"a", "e", "i", "o", "s", "t", "n", "r", "l", "c", "d", "p", "m", "f", "x", "_", "(", "{"})
    for (size_t i = 0; i < v.tokens.size(); ++i)
      if (v.tokens[i] == s) starts.push_back(i);

  rng r{seed ^ 0xA5A5A5A55A5A5A5Aull};
  auto add_merge = [&](const std::string& a, const std::string& b) {
    std::string t = a + b;
    if (t.size() > 24 || !seen.insert(t).second) return false;
    v.merges.push_back(a + " " + b);
    v.tokens.push_back(t);
    v.types.push_back(tt_normal);
    starts.push_back(v.tokens.size() - 1);
    return true;
  };
  // Space- and newline-prefixed letters first, as real vocabularies have them early.
  for (char c = 'a'; c <= 'z' && static_cast<int64_t>(v.tokens.size()) < n_normal; ++c)
    add_merge(space, std::string(1, c));
  if (static_cast<int64_t>(v.tokens.size()) < n_normal) add_merge(newline, newline);
  if (static_cast<int64_t>(v.tokens.size()) < n_normal) add_merge(space, space);
  size_t attempts = 0;
  while (static_cast<int64_t>(v.tokens.size()) < n_normal) {
    if (++attempts > static_cast<size_t>(n_normal) * 64)
      throw std::runtime_error("synthetic vocabulary: could not generate enough distinct tokens");
    const std::string& a = v.tokens[starts[r.below(starts.size())]];
    if (r.below(8) == 0) {
      const std::string& b = v.tokens[starts[r.below(starts.size())]];
      if (b.rfind(space, 0) == 0) continue;  // a space only starts a token
      add_merge(a, b);
    } else {
      add_merge(a, letters[r.below(letters.size())]);
    }
  }

  const int64_t first_special = static_cast<int64_t>(v.tokens.size());
  for (int64_t i = 0; i < k_n_specials; ++i) {
    v.tokens.emplace_back(k_specials[i]);
    std::string_view s = k_specials[i];
    v.types.push_back(s == "<tool_call>" || s == "</tool_call>" ? tt_user_defined : tt_control);
  }
  auto id = [&](int64_t k) { return static_cast<int32_t>(first_special + k); };
  v.endoftext = id(0);
  v.im_start = id(1);
  v.im_end = id(2);
  v.fim_pre = id(16);
  v.fim_mid = id(17);
  v.fim_suf = id(18);
  v.fim_pad = id(19);
  v.repo_name = id(20);
  v.file_sep = id(21);
  while (static_cast<int64_t>(v.tokens.size()) < n_vocab) {
    v.tokens.push_back("[PAD" + std::to_string(v.tokens.size()) + "]");
    v.types.push_back(tt_unused);
  }
  return v;
}

}  // namespace qf::infer::convert
