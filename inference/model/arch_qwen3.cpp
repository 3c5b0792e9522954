// qwen3: Qwen3 (dense).
//
// The qwen2 block without the q/k/v biases and with a per-head RMSNorm of the
// queries and keys (attn_q_norm / attn_k_norm, head_dim weights each) after
// the projections and before rope; NEOX rope, base from qwen3.rope.freq_base
// (1e6 when absent); head_dim from qwen3.attention.key_length (128 in every
// size, not n_embd / n_head); tied classifier in the small sizes.
//
//   x = embed(tokens)
//   for each layer:
//     h = rmsnorm(x) ; q, k, v = h Wq, h Wk, h Wv
//     q, k = rmsnorm_per_head(q), rmsnorm_per_head(k) ; rope(q, k) (halves)
//     x += attention(q, K, V) Wo                   (causal, grouped-query)
//     h = rmsnorm(x) ; x += (silu(h Wgate) * h Wup) Wdown
//   logits = rmsnorm(x) Wout                       (Wout = embed when tied)
#include "inference/gguf/gguf.h"
#include "inference/model/arch_common.h"

namespace qf::infer {

namespace {

class qwen3_arch final : public architecture {
 public:
  std::string_view name() const override { return "qwen3"; }

  void read_hparams(const gguf::file& f, hparams& hp) const override {
    hp.rope_freq_base = 1000000.0f;  // Qwen3 default when the key is absent
    read_llama_like_hparams(f, hp);
    hp.rope = rope_style::neox;
  }

  void load(const gguf::file&, weight_loader& ld, hparams& hp, model_weights& w) const override {
    load_llama_like_weights(ld, hp, w, tensor_set{.qk_norm = true, .rope_freqs = false});
  }

  bool forward(const model& m, context_state& s, const forward_batch& b) const override {
    forward_pass f(m, s, b);
    const hparams& hp = f.hp;
    const int64_t n = f.n, hd = hp.head_dim;
    f.embed();  // x [n][E]

    for (int64_t il = 0; il < hp.n_layer; ++il) {
      if (f.cancelled()) return false;
      const layer_weights& L = f.layer(il);

      // attention block
      f.rms_norm(*L.attn_norm);  // xb [n][E]
      f.project_qkv(L, il);      // q [n][n_head][hd], k, v [n][n_head_kv][hd]
      f.be.rms_norm(*s.q, *L.q_norm, *s.q, n * hp.n_head, hd, hp.rms_eps);  // each head's row of hd
      f.be.rms_norm(*s.k, *L.k_norm, *s.k, n * hp.n_head_kv, hd, hp.rms_eps);
      f.rope_qk();
      f.attend(L, il);           // K, V -> each sequence's cache; xb = attention(q, K, V) Wo [n][E]
      f.add_residual();          // x += xb

      // feed-forward block (SwiGLU)
      f.rms_norm(*L.ffn_norm);
      f.gated_ffn(L, glu::silu);  // xb = (silu(xb Wgate) * xb Wup) Wdown [n][E]
      f.add_residual();
    }

    if (b.n_out > 0) {
      f.output_rms_norm();  // xb     [n_out][E]
      f.classify();         // logits [n_out][n_vocab]
    }
    return true;
  }
};

}  // namespace

const architecture& qwen3_architecture() {
  static const qwen3_arch a;
  return a;
}

}  // namespace qf::infer
