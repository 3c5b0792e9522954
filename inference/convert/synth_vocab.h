// A synthetic byte-level BPE vocabulary (GPT-2 style, tokenizer.ggml.model =
// "gpt2") of any size >= 512, for synthetic models whose tokenizer must load.
//
// Layout: ids 0..255 are the 256 byte tokens in GPT-2's byte-to-unicode order
// (printable bytes first, as in Qwen2's vocabulary); then tokens made by
// deterministic pseudo-random merges of existing tokens (a word-ish token
// grows by one character, or two tokens join), each with its merge rule, so
// every token is reachable by BPE; then Qwen2.5-Coder's 22 special tokens
// (<|endoftext|>, <|im_start|>, ..., <|fim_prefix|>, ..., <|file_sep|>). At
// the real Qwen2.5 size (n_vocab >= 151665) they sit at Qwen2.5-Coder's ids
// (151643..151664, FIM prefix 151659) and the ids after them are UNUSED
// "[PADn]" tokens, as in the real GGUF files; at smaller sizes the specials
// are the last 22 ids.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace qf::infer::convert {

struct synth_vocab {
  std::vector<std::string> tokens;
  std::vector<int32_t> types;
  std::vector<std::string> merges;  // "left right", highest priority first
  int32_t endoftext = -1, im_start = -1, im_end = -1;
  int32_t fim_pre = -1, fim_mid = -1, fim_suf = -1, fim_pad = -1, repo_name = -1, file_sep = -1;
};

// Throws std::invalid_argument when n_vocab < 512 or > 2^24.
synth_vocab make_synth_vocab(int64_t n_vocab, uint64_t seed);

}  // namespace qf::infer::convert
