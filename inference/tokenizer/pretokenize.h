// Pre-tokenizers of byte-level BPE vocabularies: split text into "words" before merges,
// reproducing the split regexes that each model family's tokenizer.json declares (and
// that llama.cpp applies), implemented by hand over Unicode categories: no regex engine.
//
// A family is a sequence of passes; each pass splits every piece produced so far, so
// look-aheads never see past the current piece. Two kinds of pass exist:
//  - "word" passes (gpt-2 and the Llama 3 / Qwen2 family patterns), whose alternatives
//    cover every character, so each position starts a match;
//  - "search" passes (single-class patterns such as \p{N} or \s?\p{L}+), where the
//    unmatched stretches between matches are kept as pieces of their own.
#pragma once

#include <string_view>
#include <vector>

namespace qf::infer {

enum class pre_type {
  gpt2,            // 's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
  llama3,          // (?i:'s|...)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+
  qwen2,           // as llama3 with \p{N} (one digit per word)
  qwen35,          // as qwen2 with combining marks (\p{M}) joined to letters
  deepseek_coder,  // [\r\n], \s?\p{L}+, \s?\p{P}+, [CJK]+, \p{N}
  starcoder,       // \p{N}, then gpt2 (starcoder, refact)
  fallback,        // llama.cpp's default: [\p{P}$+<=>^~|]+, gpt2, \p{N}+, [0-9]{3}
};

// Maps tokenizer.ggml.pre to a family; `known` is set false for names not recognised
// (the fallback is returned then).
pre_type pre_type_from_name(std::string_view name, bool* known = nullptr);
std::string_view pre_type_name(pre_type t);

// Splits `text`, which must be well-formed UTF-8 (see text::repair_utf8), and
// appends the words (views into `text`, in order, covering it exactly) to `words`.
void pretokenize(pre_type t, std::string_view text, std::vector<std::string_view>& words);

}  // namespace qf::infer
