// What the architecture files share (arch_common.cpp): the llama-like
// hyperparameters and tensor set, and the building blocks of a forward pass
// (llama.cpp's build_norm / build_attn / build_ffn, reduced to what these
// architectures need). Each arch_*.cpp strings the blocks together in its
// forward() and writes out the steps only it has (biases, q/k norms, scales),
// so that it reads top to bottom as that architecture's pass.
#pragma once

#include <cstdint>
#include <string>

#include "inference/model/architecture.h"

namespace qf::infer {

// Reads the hyperparameters every llama-like architecture shares from
// "{arch}.*" metadata; n_vocab comes from token_embd. Every count and size is
// bounded (limits far above any released model) and block_count is checked
// against the blocks the file has tensors for. Throws model_error naming a
// missing, out-of-range or inconsistent key and its value.
void read_llama_like_hparams(const gguf::file& f, hparams& hp);
// An optional float "{arch}.*" key: dflt when absent; throws model_error when
// it is not a number or outside [lo, hi].
float opt_float(const gguf::file& f, const std::string& key, float dflt, float lo, float hi);

// Which of llama.cpp's per-layer tensors an architecture has, beyond the
// llama set (attn_norm, attn_q/k/v/output, ffn_norm, ffn_gate/up/down).
struct tensor_set {
  bool qkv_bias = false;   // attn_q/k/v.bias
  bool o_bias = false;     // attn_output.bias
  bool qk_norm = false;    // attn_q_norm.weight, attn_k_norm.weight [head_dim]
  bool norm_bias = false;  // attn_norm/ffn_norm/output_norm.bias (LayerNorm)
  bool ffn_gate = true;    // ffn_gate.weight; false: up -> activation -> down
  bool ffn_bias = false;   // ffn_up.bias, ffn_down.bias
  bool output = true;      // output.weight may be present (absent: tied); false: always tied
  bool rope_freqs = true;  // rope_freqs.weight may be present
};
// Loads the tensors of `ts`, checking shapes against hp; sets
// hp.tied_embeddings. Every tensor is checked, and the file checked for
// tensors outside the set (model_error naming the first), before the first
// is uploaded.
void load_llama_like_weights(weight_loader& ld, hparams& hp, model_weights& w, const tensor_set& ts);

// Names to the backend what layer il's attention reads and writes (each
// segment's KV cells [0, pos0 + n_rows) and the attention output rows), right
// after the q/k/v matmul: they arrive while bias, rope and the KV stores run,
// instead of one miss after another inside the attention (backend::prefetch).
void prefetch_attention(backend& be, const hparams& hp, const context_state& s, const forward_batch& b, int64_t il);
// Layer il's KV store and attention, segment by segment: the segment's rows
// of st.k / st.v go to its cache cells pos0.., and its rows of st.q attend
// causally over its own cache into st.att. `ap` gives the heads, scale and
// KV type; its row count and positions are each segment's.
void store_and_attend(backend& be, const hparams& hp, context_state& s, const forward_batch& b, int64_t il,
                      const attention_params& ap);

// The activation of a gated feed-forward block: silu (SwiGLU) or gelu (GeGLU,
// GELU's tanh approximation).
enum class glu { silu, gelu };

// One forward pass over the n rows of a forward_batch: the model, the scratch
// buffers of s and the blocks every architecture strings together. Shapes
// (context_state): x [n][E] the residual stream; xb [n][E] a block's normed
// input, then its output; q [n][n_head][hd]; k, v [n][n_head_kv][hd];
// att [n][n_head][hd]; gate, up [n][F]; logits [n_out][n_vocab].
struct forward_pass {
  forward_pass(const model& m, context_state& s, const forward_batch& b);

  backend& be;
  const hparams& hp;
  const model_weights& w;
  context_state& s;
  const forward_batch& b;
  const int64_t n;               // rows (tokens) in this pass
  const int64_t E;               // n_embd
  const rope_params rp;          // rope_params_of(m)
  const attention_params ap;     // heads, hp.kq_scale(), KV type; rows and positions set per segment

  bool cancelled() const { return b.cancel && b.cancel->is_cancelled(); }  // polled between layers
  const layer_weights& layer(int64_t il) const { return w.layers[static_cast<size_t>(il)]; }

  void embed() const;                                   // x = tok_embd[ids]                [n][E]
  void rms_norm(const buffer& weight) const;            // xb = rmsnorm(x) * weight         [n][E]
  void layer_norm(const buffer& weight, const buffer* bias) const;  // xb = layernorm(x) * weight + bias
  // q, k, v = xb Wq, xb Wk, xb Wv (one pass over xb); then prefetch_attention for layer il.
  void project_qkv(const layer_weights& L, int64_t il) const;
  void add_qkv_bias(const layer_weights& L) const;     // q += bq, k += bk, v += bv
  void rope_qk() const;                                 // q, k rotated at each row's position
  // K, V -> each sequence's cache (layer il); att = attention(q, K, V); xb = att Wo  [n][E]
  void attend(const layer_weights& L, int64_t il) const;
  // xb = (act(xb Wgate) * xb Wup) Wdown                                                 [n][E]
  void gated_ffn(const layer_weights& L, glu act) const;
  void add_residual() const;                            // x += xb
  f32_ref last_rows() const;                            // x's last n_out rows (those that need logits)
  void output_rms_norm() const;                         // xb = rmsnorm(last_rows()) * output_norm  [n_out][E]
  void classify() const;                                // logits = xb Wout (Wout = embed when tied)  [n_out][n_vocab]
};

}  // namespace qf::infer
