// Tokenizers of GGUF models: byte-level BPE ("gpt2") with per-family pre-tokenizers and
// SentencePiece-style ("llama") with byte fallback, read from tokenizer.ggml.* metadata.
//
// encode() first splits the text on special-token spellings (user-defined tokens always,
// control tokens only with parse_special, as llama.cpp does), then runs the model's
// algorithm on each plain stretch. piece() gives the bytes a token stands for; the
// detokenizer streams those bytes as UTF-8 text, holding back incomplete sequences.
//
// A tokenizer is immutable after construction; encode() may be called from several
// threads at once (the word cache of the BPE path is internally locked).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "inference/gguf/gguf.h"

namespace qf::infer {

struct special_tokens {
  int32_t bos = -1, eos = -1, eot = -1, pad = -1;
  int32_t fim_pre = -1, fim_suf = -1, fim_mid = -1, fim_pad = -1, fim_rep = -1, fim_sep = -1;
};

// tokenizer.ggml.token_type values.
enum class token_type : int32_t { undefined = 0, normal = 1, unknown = 2, control = 3, user_defined = 4, unused = 5, byte = 6 };

// Everything a tokenizer is built from; from_gguf() fills it from metadata. Special ids
// left at -1 are looked up by their usual spellings.
struct vocab_data {
  std::string model;  // "llama" | "gpt2"
  std::string pre;    // tokenizer.ggml.pre ("" when absent)
  std::vector<std::string> tokens;
  std::vector<float> scores;        // may be empty (all 0)
  std::vector<int32_t> types;       // may be empty: all normal (SentencePiece: <0xNN> byte,
                                    // <unk> unknown, <s> and </s> control)
  std::vector<std::string> merges;  // "left right", rank = index (gpt2 only)
  special_tokens special;
  int32_t unk = -1;  // tokenizer.ggml.unknown_token_id
  std::optional<bool> add_bos, add_eos, add_space_prefix;
};

class tokenizer {
 public:
  // Reads tokenizer.ggml.* from a GGUF; throws gguf::gguf_error on missing or
  // malformed tokenizer metadata or an unsupported tokenizer model.
  static std::unique_ptr<tokenizer> from_gguf(const gguf::file& f);
  // Same from already extracted data (tests, converters); throws gguf::gguf_error.
  static std::unique_ptr<tokenizer> from_vocab(vocab_data v);
  ~tokenizer();
  tokenizer(const tokenizer&) = delete;
  tokenizer& operator=(const tokenizer&) = delete;

  // Token ids of `text`; BOS first when add_bos and the vocabulary has one. With
  // parse_special, spellings of control tokens in the text become those tokens;
  // without it they are tokenized as ordinary text.
  std::vector<int32_t> encode(std::string_view text, bool add_bos, bool parse_special = false) const;
  // Tokens of text that continues earlier text (a chunk in the middle of a buffer): no
  // BOS and, for SentencePiece vocabularies, no dummy space before the first word. For
  // byte-level BPE this is encode(text, false, parse_special).
  std::vector<int32_t> encode_continuation(std::string_view text, bool parse_special = false) const;
  // Raw bytes of a token as it appears in text (byte tokens decoded, ▁ -> space, GPT-2
  // byte alphabet undone). Control tokens give their spelling (the detokenizer skips
  // them). An out-of-range id gives an empty string.
  const std::string& piece(int32_t id) const;
  // Concatenated pieces of non-control tokens; strip_leading_space drops the space that
  // SentencePiece's dummy prefix put before the first word.
  std::string decode(std::span<const int32_t> ids, bool strip_leading_space = false) const;

  bool is_control(int32_t id) const;  // special/control tokens never printed as text
  bool is_eog(int32_t id) const;      // ends generation: EOS, EOT, <|im_end|>, FIM pad/repo/file-sep...
  token_type type(int32_t id) const;
  const std::string& text(int32_t id) const;  // spelling in the vocabulary
  int32_t find(std::string_view spelling) const;  // id of a token by spelling, -1 if none
  int32_t n_vocab() const;
  const special_tokens& special() const;
  bool add_bos_default() const;  // tokenizer.ggml.add_bos_token (family default when absent)
  bool add_space_prefix() const;  // SentencePiece dummy prefix (llama model)
  std::string_view model_kind() const;  // "llama" (spm) | "gpt2" (bpe)
  std::string_view pre_kind() const;    // tokenizer.ggml.pre

  struct impl;

 private:
  std::vector<int32_t> encode_impl(std::string_view text, bool add_bos, bool parse_special, bool dummy_prefix) const;
  explicit tokenizer(std::unique_ptr<impl> p);
  std::unique_ptr<impl> impl_;
};

// Streams UTF-8 text from token ids, holding back incomplete multi-byte sequences.
class detokenizer {
 public:
  // strip_leading_space: drop one leading space of the first text produced (for
  // SentencePiece vocabularies when decoding from the start of a prompt).
  explicit detokenizer(const tokenizer& t, bool strip_leading_space = false);
  std::string push(int32_t id);  // text completed by this token (may be empty)
  std::string flush();           // whatever is left (an incomplete sequence as raw bytes)

 private:
  const tokenizer& tok_;
  std::string pending_;
  bool strip_;
};

}  // namespace qf::infer
