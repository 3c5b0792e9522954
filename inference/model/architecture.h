// The seam between the generic engine (model loading, context, KV cache) and
// one model architecture. Each architecture lives in its own file
// (arch_llama.cpp, arch_qwen2.cpp, arch_qwen3.cpp, arch_starcoder2.cpp,
// arch_gemma.cpp, arch_granite.cpp) and provides:
//  - read_hparams(): hyperparameters from "{arch}.*" metadata, each bounded
//    and checked against the tensors before anything is sized by it (no
//    backend needed: a bad file fails before a device is started);
//  - load(): the weights, every tensor checked by name, shape and type before
//    any is uploaded, and every tensor of the file consumed (an unexpected
//    tensor is an error naming it);
//  - forward(): the layers over one ubatch, reading top to bottom as a
//    sequence of backend ops.
// What the architecture files share (the llama-like hyperparameters and
// tensors, the blocks of a forward pass) is in arch_common.h.
// find_architecture() maps general.architecture to one of them.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "inference/core/cancellation.h"
#include "inference/model/context_state.h"
#include "inference/model/model.h"
#include "inference/model/weights.h"

namespace qf::infer {

namespace gguf { class file; }

// A run of a forward pass's rows that belongs to one sequence: rows [row0,
// row0 + n_rows) sit at consecutive positions pos0.. of that sequence, whose
// KV cache is k_cache / v_cache (one buffer per layer) with its cells found
// through `table` (kv_table; `blocks_host` is the same block table on the
// host, for prefetching); `pos` holds those rows' positions (int32 [n_rows],
// uploaded), for the ops that read them when they run.
struct forward_segment {
  int64_t row0 = 0;
  int64_t n_rows = 0;
  int64_t pos0 = 0;
  const std::vector<buffer_ptr>* k_cache = nullptr;
  const std::vector<buffer_ptr>* v_cache = nullptr;
  const buffer* pos = nullptr;
  kv_table table;
  std::span<const int32_t> blocks_host;
};

// One forward pass over n_tokens rows (token ids and positions already
// uploaded to st.ids / st.pos, one position per row); the last n_out rows
// need logits, written to st.logits [n_out][n_vocab]. The rows belong to one
// or more sequences (segments, in row order, covering every row): every op
// but the KV store and the attention works row by row, so the rows of
// several sequences share one pass and each weight is read once for all of
// them; each segment's keys and values go to its own cache, and its queries
// attend over that cache only (store_and_attend).
struct forward_batch {
  int64_t n_tokens = 0;
  int64_t pos0 = 0;  // position of row 0 (a one-sequence pass)
  int64_t n_out = 0;
  const cancel_token* cancel = nullptr;  // polled between layers
  std::span<const forward_segment> segments;
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
const architecture& qwen3_architecture();       // arch_qwen3.cpp
const architecture& starcoder2_architecture();  // arch_starcoder2.cpp
const architecture& gemma_architecture();       // arch_gemma.cpp
const architecture& granite_architecture();     // arch_granite.cpp
const architecture* find_architecture(std::string_view name);  // nullptr if unknown
std::string supported_architectures();                          // "llama, qwen2, ..."

// RoPE parameters of a loaded model (style, dims, base, scaling, frequency factors).
rope_params rope_params_of(const model& m);

}  // namespace qf::infer
