// Tiny synthetic models of every supported architecture for the engine tests:
// random weights (kept as floats for the reference forward pass), a small
// vocabulary (SentencePiece-style for llama, gemma and granite, byte-level BPE
// for qwen2, qwen3 and starcoder2), written to a GGUF file with the same
// tensor names and metadata keys as llama.cpp's converter.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "inference/core/ggml_types.h"

namespace qf::test {

struct synth_config {
  // llama | qwen2 | qwen3 | starcoder2 | gemma | granite: decides the tensor
  // set (biases, q/k norms, LayerNorm, gate), rope style and vocab kind.
  std::string arch = "llama";
  int64_t n_embd = 64;
  int64_t head_dim = 0;  // 0: n_embd / n_head; else written as attention.key_length
  int64_t n_layer = 2;
  int64_t n_head = 4;
  int64_t n_head_kv = 2;
  int64_t n_ff = 96;
  int64_t n_ctx_train = 512;
  float rms_eps = 1e-5f;
  float rope_base = 10000.0f;
  bool tied = false;
  bool rope_freqs = false;  // write Llama 3.1-style rope_freqs.weight factors
  // YaRN: rope.scaling.type yarn with these (attn_factor 0: key not written).
  bool yarn = false;
  float yarn_factor = 4, yarn_attn_factor = 0, yarn_beta_fast = 32, yarn_beta_slow = 1;
  int64_t yarn_orig_ctx = 64;
  // granite's multipliers (written for granite only).
  float embd_scale = 12.0f, residual_scale = 0.22f, attn_scale = 0.0078125f * 16, logit_scale = 8.0f;
  infer::ggml_type wtype = infer::ggml_type::f32;  // type of the 2-D matrices
  uint32_t seed = 1;
};

struct synth_layer {
  std::vector<float> attn_norm;    // [E]
  std::vector<float> attn_norm_b;  // [E] starcoder2
  std::vector<float> wq, wk, wv;   // [Q][E], [KV][E], [KV][E]
  std::vector<float> bq, bk, bv;   // qwen2, starcoder2
  std::vector<float> q_norm, k_norm;  // [hd] qwen3
  std::vector<float> wo;           // [E][Q]
  std::vector<float> bo;           // [E] starcoder2
  std::vector<float> ffn_norm;     // [E]
  std::vector<float> ffn_norm_b;   // [E] starcoder2
  std::vector<float> gate, up;     // [F][E] (no gate in starcoder2)
  std::vector<float> up_b;         // [F] starcoder2
  std::vector<float> down;         // [E][F]
  std::vector<float> down_b;       // [E] starcoder2
};

struct synth_model {
  synth_config cfg;
  int64_t n_vocab = 0;
  std::vector<std::string> tokens;  // the vocabulary written to the file
  std::vector<float> tok_embd;      // [V][E]
  std::vector<float> output_norm;   // [E]
  std::vector<float> output_norm_b; // [E] starcoder2
  std::vector<float> output;        // [V][E], empty when tied
  std::vector<float> rope_freqs;    // [head_dim/2] or empty
  std::vector<synth_layer> layers;
};

synth_model make_synth(const synth_config& cfg);
int64_t head_dim_of(const synth_config& c);  // c.head_dim, or n_embd / n_head

struct write_options {
  std::string arch_override;             // write this general.architecture instead
  std::set<std::string> omit;            // tensor names left out
  std::string misshape;                  // tensor written with one row too many
  std::map<std::string, uint64_t> set_u64;  // metadata keys (re)written as u64 with these values
  std::map<std::string, int64_t> extra;     // f32 vector tensors of these lengths, added
};

// Writes the model as GGUF; matrices in cfg.wtype (quantized with the reference quantizer).
void write_gguf(const synth_model& m, const std::string& path, const write_options& opts = {});

// A path under the test temporary directory, unique per name.
std::string temp_path(const std::string& name);

}  // namespace qf::test
