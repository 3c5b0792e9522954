// llama: Llama 2/3, CodeLlama, TinyLlama, DeepSeek-Coder (and llama2.c models
// converted to GGUF).
//
//   x = embed(tokens)
//   for each layer:
//     h = rmsnorm(x) ; q, k, v = h Wq, h Wk, h Wv ; rope(q, k) (adjacent pairs)
//     x += attention(q, K, V) Wo                   (causal, grouped-query)
//     h = rmsnorm(x) ; x += (silu(h Wgate) * h Wup) Wdown
//   logits = rmsnorm(x) Wout                       (Wout = embed when tied)
//
// Rope rotates adjacent pairs (2i, 2i+1): llama.cpp's GGUF converter permutes
// the rows of HF q/k weights so that this is right; llama2.c checkpoints use
// this layout natively. Matches llama2.c's run.c: rms eps from metadata
// (1e-5 there), rope theta 10000, tied classifier when output.weight is absent.
#include "inference/gguf/gguf.h"
#include "inference/model/arch_common.h"

namespace qf::infer {

namespace {

class llama_arch final : public architecture {
 public:
  std::string_view name() const override { return "llama"; }

  void read_hparams(const gguf::file& f, hparams& hp) const override {
    read_llama_like_hparams(f, hp);
    hp.rope = rope_style::norm;
  }

  void load(const gguf::file&, weight_loader& ld, hparams& hp, model_weights& w) const override {
    load_llama_like_weights(ld, hp, w, tensor_set{});
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
      f.rope_qk();
      f.attend(L, il);           // K, V -> each sequence's cache; xb = attention(q, K, V) Wo [n][E]
      f.add_residual();          // x += xb

      // feed-forward block (SwiGLU)
      f.rms_norm(*L.ffn_norm);       // xb [n][E]
      f.gated_ffn(L, glu::silu);     // xb = (silu(xb Wgate) * xb Wup) Wdown [n][E]
      f.add_residual();              // x += xb
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

const architecture& llama_architecture() {
  static const llama_arch a;
  return a;
}

}  // namespace qf::infer
