// Conversion of a llama2.c "legacy" checkpoint plus its tokenizer.bin into a
// standard GGUF file of architecture `llama`.
//
// llama2.c facts this relies on (run.c): the checkpoint starts with 7 int32
// (dim, hidden_dim, n_layers, n_heads, n_kv_heads, vocab_size, seq_len); a
// positive vocab_size means the classifier shares the token embedding. Weights
// follow as float32 in the order token_embedding, rms_att, wq, wk, wv, wo,
// rms_ffn, w1, w2, w3, rms_final, two unused RoPE tables of seq_len*head/2,
// and the classifier when not shared. Every matrix is (out, in) row-major,
// which is GGUF's ne = [in, out] without any transposition. llama2.c rotates
// adjacent pairs (2i, 2i+1) with theta 10000, i.e. llama.cpp's normal llama
// RoPE, so wq/wk need no permutation. RMS norm epsilon is 1e-5. w1/w3/w2 are
// the gate/up/down projections of the SwiGLU feed-forward.
//
// tokenizer.bin: int32 max_token_length, then per token float32 score, int32
// length, bytes. Spaces are stored as ' ' (the exporter replaced U+2581), BOS
// and EOS as "\n<s>\n" and "\n</s>\n"; byte-fallback tokens are "<0xXX>".
// The GGUF vocabulary restores U+2581, names BOS/EOS "<s>"/"</s>" (CONTROL),
// <unk> UNKNOWN, byte tokens BYTE, everything else NORMAL.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "inference/core/ggml_types.h"

namespace qf::infer::convert {

class convert_error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct llama2c_config {
  int32_t dim = 0, hidden_dim = 0, n_layers = 0, n_heads = 0, n_kv_heads = 0, vocab_size = 0, seq_len = 0;
  bool shared_classifier = true;
};

struct llama2c_vocab {
  std::vector<std::string> tokens;  // GGUF spelling (U+2581 for spaces)
  std::vector<float> scores;
  std::vector<int32_t> types;       // llama.cpp token types
};

// Reads and validates the header; throws convert_error naming the bad field.
llama2c_config read_llama2c_config(const std::string& checkpoint_path);
// Reads a tokenizer.bin of `vocab_size` tokens; throws convert_error.
llama2c_vocab read_llama2c_vocab(const std::string& tokenizer_path, int32_t vocab_size);

// Converts; `type` is f32 or f16 (matrices; norms stay f32). Throws convert_error,
// or gguf::gguf_error when out_path is one of the inputs (same path or link) or
// cannot be written (the output is written to a temporary file, then renamed).
void convert_llama2c(const std::string& checkpoint_path, const std::string& tokenizer_path,
                     const std::string& out_path, ggml_type type, const std::string& name = "");

}  // namespace qf::infer::convert
