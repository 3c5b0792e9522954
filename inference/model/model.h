// A loaded model: hyperparameters, tokenizer, and the weights resident on a
// backend (CPU or CUDA).
//
// model::load() reads a GGUF file into memory the process owns (so the file
// on disk may be replaced or truncated while the model serves), reads
// general.architecture, and hands the file to that architecture's loader
// (one file per architecture: arch_llama.cpp, arch_qwen2.cpp), which reads and
// bounds the hyperparameters from "{arch}.*" metadata and checks the name,
// shape and type of every tensor before uploading them once, in their
// quantized form, to the backend. The forward pass lives with the architecture; a `context`
// (context.h) holds one sequence's KV cache and runs it.
//
// A model is immutable after load and may be shared by several contexts, but
// its backend (thread pool, device stream) is driven by one thread at a time.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "inference/backend/rope.h"
#include "inference/core/errors.h"

namespace qf::infer {

namespace gguf { class file; }
class tokenizer;      // inference/tokenizer/tokenizer.h
class backend;        // inference/backend/backend.h
class architecture;   // inference/model/architecture.h
struct model_weights; // inference/model/weights.h

struct hparams {
  std::string arch;              // "llama" | "qwen2" | "qwen3" | "starcoder2" | "gemma" | "granite"
  int64_t n_vocab = 0;           // rows of token_embd
  int64_t n_embd = 0;            // {arch}.embedding_length
  int64_t n_layer = 0;           // {arch}.block_count
  int64_t n_head = 0;            // {arch}.attention.head_count
  int64_t n_head_kv = 0;         // {arch}.attention.head_count_kv (GQA; = n_head when absent)
  int64_t head_dim = 0;          // {arch}.attention.key_length, else n_embd / n_head
  int64_t n_rot = 0;             // {arch}.rope.dimension_count, else head_dim
  int64_t n_ff = 0;              // {arch}.feed_forward_length
  int64_t n_ctx_train = 0;       // {arch}.context_length
  float rms_eps = 1e-5f;         // {arch}.attention.layer_norm_rms_epsilon (layer_norm_epsilon for LayerNorm archs)
  float rope_freq_base = 10000;  // {arch}.rope.freq_base
  float rope_freq_scale = 1;     // 1 / {arch}.rope.scaling.factor when scaling.type is linear or yarn
  rope_style rope = rope_style::norm;
  // YaRN ({arch}.rope.scaling.type == "yarn"; rope.h has the formula).
  float rope_ext_factor = 0;     // {arch}.rope.scaling.yarn_ext_factor, 1 by default under YaRN
  float rope_attn_factor = 1;    // {arch}.rope.scaling.attn_factor (or yarn_attn_factor)
  float yarn_beta_fast = 32;     // {arch}.rope.scaling.yarn_beta_fast
  float yarn_beta_slow = 1;      // {arch}.rope.scaling.yarn_beta_slow
  int64_t n_ctx_orig = 0;        // {arch}.rope.scaling.original_context_length, else n_ctx_train
  bool tied_embeddings = false;  // output.weight absent -> token_embd reused as classifier
  // Multipliers (1 unless the architecture defines them).
  float embd_scale = 1;          // x = embed(tokens) * embd_scale (gemma: sqrt(n_embd); granite.embedding_scale)
  float residual_scale = 1;      // x += block(x) * residual_scale (granite.residual_scale)
  float attn_scale = 0;          // q.k scale (granite.attention.scale); 0: 1 / sqrt(head_dim)
  float logit_scale = 1;         // logits = ... / logit_scale (granite.logit_scale)

  float kq_scale() const;        // attn_scale, or 1 / sqrt(head_dim)

  int64_t n_embd_q() const { return n_head * head_dim; }      // width of Q / attention output
  int64_t n_embd_kv() const { return n_head_kv * head_dim; }  // width of K and V rows
};

struct model_options {
  int n_threads = 0;            // <= 0: hardware concurrency
  std::string device = "auto";  // auto | cpu | cuda
};

class model {
 public:
  // Loads a GGUF file. Throws model_error (unknown architecture naming the
  // supported ones, missing tensor naming which, wrong shape/type, unknown
  // device) or gguf::gguf_error (malformed file). With device "auto", a GPU
  // that fails while taking the weights (out of memory) hands over to the CPU.
  static std::unique_ptr<model> load(const std::string& path, const model_options& opts);
  // Loads onto a backend the caller made (a wrapped or preconfigured one).
  static std::unique_ptr<model> load(const std::string& path, std::unique_ptr<backend> be);
  ~model();
  model(const model&) = delete;
  model& operator=(const model&) = delete;

  const hparams& hp() const { return hp_; }
  const tokenizer& vocab() const { return *vocab_; }
  // e.g. "qwen2 494M Q8_0 on cpu (AVX-512, 2 threads)"
  std::string describe() const;
  // Total bytes of weights (as stored, quantized); decode reads about this much per token.
  size_t weight_bytes() const { return weight_bytes_; }
  int64_t n_params() const { return n_params_; }
  // Most common weight type of the matrices, e.g. "Q8_0" (or "mixed Q4_K/Q6_K").
  const std::string& weight_type_name() const { return type_name_; }

  // Engine internals, used by context and the architecture files.
  backend& be() const { return *backend_; }
  const architecture& arch() const { return *arch_; }
  const model_weights& weights() const { return *weights_; }
  const gguf::file& gguf() const { return *file_; }

 private:
  model();
  template <class MakeBackend>
  static std::unique_ptr<model> load_with(const std::string& path, MakeBackend make_backend);
  hparams hp_;
  std::unique_ptr<gguf::file> file_;  // kept: CPU weights point into its in-memory copy
  std::unique_ptr<tokenizer> vocab_;
  std::unique_ptr<backend> backend_;
  const architecture* arch_ = nullptr;
  std::unique_ptr<model_weights> weights_;
  size_t weight_bytes_ = 0;
  int64_t n_params_ = 0;
  std::string type_name_;
};

}  // namespace qf::infer
