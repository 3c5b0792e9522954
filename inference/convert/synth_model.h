// Synthetic models: random weights with the exact shapes and metadata of a
// real architecture, written as standard GGUF, so that speed and correctness
// can be measured on realistic shapes without downloading weights.
//
// Weights are N(0, init_std) (default 0.02, as in the models' own training
// init), norm weights 1 + N(0, 0.1) (so a forgotten norm weight shows), biases
// N(0, init_std). Every tensor has its own generator seeded by (seed, tensor
// name), so the same seed gives the same weights whatever the output type.
// The vocabulary is synth_vocab.h's byte-level BPE of the requested size.
//
// Presets: "qwen2.5-coder-0.5b" and "qwen2.5-coder-1.5b" (exact Qwen2.5-Coder
// shapes, arch qwen2, tied embeddings, q/k/v biases, rope base 1e6, eps 1e-6,
// vocab 151936) and "tiny" (a few-layer model for tests, any supported arch:
// llama, qwen2, qwen3, starcoder2, gemma, granite, each with its own tensor
// set and metadata as llama.cpp's converter writes them).
#pragma once

#include <cstdint>
#include <string>

#include "inference/core/ggml_types.h"

namespace qf::infer::convert {

struct synth_spec {
  std::string arch = "llama";  // llama | qwen2 | qwen3 | starcoder2 | gemma | granite
  std::string name = "synthetic";
  int64_t n_vocab = 512, n_embd = 64, n_layer = 2, n_head = 4, n_head_kv = 2, n_ff = 128, n_ctx = 256;
  float rope_base = 10000.0f, rms_eps = 1e-5f;
  bool tied = false;     // no output.weight: the token embedding is reused
  bool qkv_bias = false; // attn_q/k/v.bias (qwen2)
  float init_std = 0.02f;
  float yarn_factor = 0;      // > 0: rope.scaling.type yarn with this factor (>= 1)
  int64_t yarn_orig_ctx = 0;  // rope.scaling.original_context_length under YaRN
  uint64_t seed = 1;
  // >= 0: instead of random weights, weights that make greedy decoding emit
  // this token id after any input (llama, qwen2, qwen3; not tied): every
  // block writes nothing to the residual stream, every token embeds as the
  // same unit vector, and only this token's classifier row reads it. For
  // end-to-end tests that need a model whose output is known.
  int64_t emit_token = -1;
  int64_t head_dim() const { return n_embd / n_head; }
};

// A preset for an architecture; throws std::invalid_argument for an unknown
// preset (the message lists them) or a preset/arch mismatch.
synth_spec synth_preset(const std::string& preset, const std::string& arch);
// Checks shapes (divisibility, ranges); throws std::invalid_argument.
void validate(const synth_spec& s);
// Writes the model with matrices in `type` (f32, f16 or bf16; quantized files
// are made from such a file by the quantizer). 1-D tensors stay f32.
void write_synth_model(const synth_spec& s, ggml_type type, const std::string& out_path);

}  // namespace qf::infer::convert
