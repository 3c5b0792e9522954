// Tiny synthetic llama / qwen2 models for the engine tests: random weights
// (kept as floats for the reference forward pass), a small vocabulary
// (SentencePiece-style for llama, byte-level BPE for qwen2), written to a GGUF
// file with the same tensor names and metadata keys as llama.cpp's converter.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "inference/core/ggml_types.h"

namespace qf::test {

struct synth_config {
  std::string arch = "llama";  // llama | qwen2 (decides biases, rope style and vocab kind)
  int64_t n_embd = 64;
  int64_t n_layer = 2;
  int64_t n_head = 4;
  int64_t n_head_kv = 2;
  int64_t n_ff = 96;
  int64_t n_ctx_train = 512;
  float rms_eps = 1e-5f;
  float rope_base = 10000.0f;
  bool tied = false;
  bool rope_freqs = false;  // write Llama 3.1-style rope_freqs.weight factors
  infer::ggml_type wtype = infer::ggml_type::f32;  // type of the 2-D matrices
  uint32_t seed = 1;
};

struct synth_layer {
  std::vector<float> attn_norm;    // [E]
  std::vector<float> wq, wk, wv;   // [Q][E], [KV][E], [KV][E]
  std::vector<float> bq, bk, bv;   // qwen2 only
  std::vector<float> wo;           // [E][Q]
  std::vector<float> ffn_norm;     // [E]
  std::vector<float> gate, up;     // [F][E]
  std::vector<float> down;         // [E][F]
};

struct synth_model {
  synth_config cfg;
  int64_t n_vocab = 0;
  std::vector<std::string> tokens;  // the vocabulary written to the file
  std::vector<float> tok_embd;      // [V][E]
  std::vector<float> output_norm;   // [E]
  std::vector<float> output;        // [V][E], empty when tied
  std::vector<float> rope_freqs;    // [head_dim/2] or empty
  std::vector<synth_layer> layers;
};

synth_model make_synth(const synth_config& cfg);

struct write_options {
  std::string arch_override;             // write this general.architecture instead
  std::set<std::string> omit;            // tensor names left out
  std::string misshape;                  // tensor written with one row too many
  std::map<std::string, uint64_t> set_u64;  // metadata keys (re)written as u64 with these values
};

// Writes the model as GGUF; matrices in cfg.wtype (quantized with the reference quantizer).
void write_gguf(const synth_model& m, const std::string& path, const write_options& opts = {});

// A path under the test temporary directory, unique per name.
std::string temp_path(const std::string& name);

}  // namespace qf::test
