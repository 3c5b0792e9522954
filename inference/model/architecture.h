// The seam between the generic engine (model loading, context, KV cache) and
// one model architecture. Each architecture lives in its own file
// (arch_llama.cpp, arch_qwen2.cpp) and provides:
//  - read_hparams(): hyperparameters from "{arch}.*" metadata, each bounded
//    and checked against the tensors before anything is sized by it (no
//    backend needed: a bad file fails before a device is started);
//  - load(): the weights, every tensor checked by name, shape and type before
//    any is uploaded;
//  - forward(): the layers over one ubatch, reading top to bottom as a
//    sequence of backend ops.
// find_architecture() maps general.architecture to one of them.
#pragma once

#include <string>
#include <string_view>

#include "inference/core/cancellation.h"
#include "inference/model/context_state.h"
#include "inference/model/model.h"
#include "inference/model/weights.h"

namespace qf::infer {

namespace gguf { class file; }

// One forward pass: rows [0, n_tokens) of the ubatch sit at positions
// pos0.. (token ids and positions already uploaded to st.ids / st.pos); the
// last n_out rows need logits, written to st.logits [n_out][n_vocab].
struct forward_batch {
  int64_t n_tokens = 0;
  int64_t pos0 = 0;
  int64_t n_out = 0;
  const cancel_token* cancel = nullptr;  // polled between layers
};

class architecture {
 public:
  virtual ~architecture() = default;
  virtual std::string_view name() const = 0;
  // Fills hp (all but hp.arch, set by the caller). Throws model_error naming
  // the key and value that are missing, out of range or inconsistent.
  virtual void read_hparams(const gguf::file& f, hparams& hp) const = 0;
  // Fills w (and what of hp depends on the tensors present) for hp from
  // read_hparams(). Throws model_error.
  virtual void load(const gguf::file& f, weight_loader& ld, hparams& hp, model_weights& w) const = 0;
  // Returns false when cancelled between layers (the ubatch is then incomplete).
  virtual bool forward(const model& m, context_state& st, const forward_batch& b) const = 0;
};

const architecture& llama_architecture();  // arch_llama.cpp
const architecture& qwen2_architecture();  // arch_qwen2.cpp
const architecture* find_architecture(std::string_view name);  // nullptr if unknown
std::string supported_architectures();                          // "llama, qwen2"

// Reads the hyperparameters every llama-like architecture shares from
// "{arch}.*" metadata; n_vocab comes from token_embd. Every count and size is
// bounded (limits far above any released model) and block_count is checked
// against the blocks the file has tensors for. Throws model_error naming a
// missing, out-of-range or inconsistent key and its value.
void read_llama_like_hparams(const gguf::file& f, hparams& hp);
// Loads the tensors every llama-like architecture shares (with q/k/v biases
// when `biases`), checking shapes against hp; sets hp.tied_embeddings. Every
// tensor is checked before the first is uploaded.
void load_llama_like_weights(weight_loader& ld, hparams& hp, model_weights& w, bool biases);
// RoPE parameters of a loaded model (style, dims, base, scaling, frequency factors).
rope_params rope_params_of(const model& m);

}  // namespace qf::infer
