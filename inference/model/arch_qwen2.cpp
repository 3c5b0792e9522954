// qwen2: Qwen2 / Qwen2.5 / Qwen2.5-Coder.
//
// The llama block with three differences: q, k and v projections carry
// biases; rope is NEOX-style (pairs (i, i + n_rot/2)) with the base from
// qwen2.rope.freq_base (1e6 for Qwen2.5); the small sizes tie the classifier
// to the token embedding (no output.weight).
//
//   x = embed(tokens)
//   for each layer:
//     h = rmsnorm(x) ; q, k, v = h Wq + bq, h Wk + bk, h Wv + bv ; rope(q, k) (halves)
//     x += attention(q, K, V) Wo                   (causal, grouped-query)
//     h = rmsnorm(x) ; x += (silu(h Wgate) * h Wup) Wdown
//   logits = rmsnorm(x) Wout                       (Wout = embed when tied)
#include "inference/gguf/gguf.h"
#include "inference/model/arch_common.h"

namespace qf::infer {

namespace {

class qwen2_arch final : public architecture {
 public:
  std::string_view name() const override { return "qwen2"; }

  void read_hparams(const gguf::file& f, hparams& hp) const override {
    hp.rope_freq_base = 1000000.0f;  // Qwen2 default when the key is absent
    read_llama_like_hparams(f, hp);
    hp.rope = rope_style::neox;
  }

  void load(const gguf::file&, weight_loader& ld, hparams& hp, model_weights& w) const override {
    load_llama_like_weights(ld, hp, w, tensor_set{.qkv_bias = true});
  }

  bool forward(const model& m, context_state& s, const forward_batch& b) const override {
    forward_pass f(m, s, b);
    f.embed();  // x [n][E]

    for (int64_t il = 0; il < f.hp.n_layer; ++il) {
      if (f.cancelled()) return false;
      const layer_weights& L = f.layer(il);

      // attention block
      f.rms_norm(*L.attn_norm);  // xb [n][E]
      f.project_qkv(L, il);      // q [n][n_head][hd], k, v [n][n_head_kv][hd]
      f.add_qkv_bias(L);         // q += bq, k += bk, v += bv
      f.rope_qk();
      f.attend(L, il);           // K, V -> each sequence's cache; xb = attention(q, K, V) Wo [n][E]
      f.add_residual();          // x += xb

      // feed-forward block (SwiGLU)
      f.rms_norm(*L.ffn_norm);
      f.gated_ffn(L, glu::silu);  // xb = (silu(xb Wgate) * xb Wup) Wdown [n][E]
      f.add_residual();
    }

    // logits only for the last n_out rows
    if (b.n_out > 0) {
      f.output_rms_norm();  // xb     [n_out][E]
      f.classify();         // logits [n_out][n_vocab]
    }
    return true;
  }
};

}  // namespace

const architecture& qwen2_architecture() {
  static const qwen2_arch a;
  return a;
}

}  // namespace qf::infer
