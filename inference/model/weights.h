// The weights of a decoder-only transformer as the architectures use them,
// resident on the backend, and the loader that checks each GGUF tensor's name,
// shape and type before uploading it.
//
// Shapes are given as [rows][cols] of the matrix (GGUF ne = {cols, rows}).
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "inference/backend/backend.h"

namespace qf::infer {

namespace gguf { class file; }

// Tensors an architecture does not have stay null.
struct layer_weights {
  buffer_ptr attn_norm;            // f32 [n_embd]
  buffer_ptr attn_norm_b;          // f32 [n_embd] (layer norm bias: starcoder2)
  weight_ptr wq;                   // [n_embd_q][n_embd]
  weight_ptr wk;                   // [n_embd_kv][n_embd]
  weight_ptr wv;                   // [n_embd_kv][n_embd]
  buffer_ptr bq, bk, bv;           // f32 [n_embd_q], [n_embd_kv], [n_embd_kv] (qwen2, starcoder2)
  buffer_ptr q_norm, k_norm;       // f32 [head_dim] per-head RMSNorm of q and k (qwen3)
  weight_ptr wo;                   // [n_embd][n_embd_q]
  buffer_ptr bo;                   // f32 [n_embd] (starcoder2)
  buffer_ptr ffn_norm;             // f32 [n_embd]
  buffer_ptr ffn_norm_b;           // f32 [n_embd] (starcoder2)
  weight_ptr ffn_gate;             // [n_ff][n_embd] (none in starcoder2)
  weight_ptr ffn_up;               // [n_ff][n_embd]
  buffer_ptr ffn_up_b;             // f32 [n_ff] (starcoder2)
  weight_ptr ffn_down;             // [n_embd][n_ff]
  buffer_ptr ffn_down_b;           // f32 [n_embd] (starcoder2)
};

struct model_weights {
  weight_ptr tok_embd;     // [n_vocab][n_embd]
  buffer_ptr output_norm;  // f32 [n_embd]
  buffer_ptr output_norm_b;  // f32 [n_embd] (starcoder2)
  weight_ptr output;       // [n_vocab][n_embd]; null when tied to tok_embd
  buffer_ptr rope_freqs;   // f32 [n_rot/2] Llama 3.1 rope frequency factors; null when absent
  std::vector<layer_weights> layers;
  const weight& classifier() const { return output ? *output : *tok_embd; }
};

// Reads tensors from a GGUF file and uploads them to a backend, checking each.
class weight_loader {
 public:
  weight_loader(gguf::file& f, backend& be) : f_(f), be_(be) {}
  // While on, matrix() and vector() run every check but upload nothing (and
  // return null): a first pass over all tensors before the uploading one.
  void set_check_only(bool on) { check_only_ = on; }
  bool has(const std::string& name) const;
  // A matrix [rows][cols] in any type the backend supports. Throws model_error
  // naming the tensor when it is missing, misshapen or of an unsupported type.
  weight_ptr matrix(const std::string& name, int64_t rows, int64_t cols);
  // A vector of n floats (stored as f32, f16 or bf16), uploaded as f32.
  buffer_ptr vector(const std::string& name, int64_t n);
  // Throws model_error naming the first tensor of the file that no matrix()
  // or vector() call asked for: every tensor must be consumed by its
  // architecture (a file with extra tensors is another model, not this one).
  void require_all_used(const std::string& arch) const;

  size_t bytes() const { return bytes_; }
  int64_t n_params() const { return n_params_; }
  // Most used matrix type by bytes, or "A/B" for a mix, e.g. "Q4_K/Q6_K".
  std::string type_summary() const;

 private:
  gguf::file& f_;  // a tensor whose weight owns a copy is released from it
  backend& be_;
  bool check_only_ = false;
  size_t bytes_ = 0;
  int64_t n_params_ = 0;
  std::map<std::string, size_t> bytes_by_type_;
  std::set<std::string> used_;  // names asked for, in either pass
};

}  // namespace qf::infer
