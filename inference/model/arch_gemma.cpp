// gemma: Gemma 1 and CodeGemma (2B, 7B).
//
// The llama block with: token embeddings scaled by sqrt(n_embd); a GeGLU MLP
// (gelu(h Wgate) * h Wup, GELU's tanh approximation as llama.cpp's
// ggml_gelu); NEOX rope; head_dim from gemma.attention.key_length (256, not
// n_embd / n_head in the 7B); the classifier always tied to the embedding
// (llama.cpp's converter drops lm_head, so a file with output.weight is not
// a gemma file).
//
// Gemma's RMSNorm scales by (1 + w). llama.cpp's converter stores the sum:
// GemmaModel.modify_tensors in convert_hf_to_gguf.py adds 1 to every tensor
// whose name ends in "norm.weight" before writing it, so the GGUF weights are
// used as they are, with the plain RMSNorm of the llama block.
//
//   x = embed(tokens) * sqrt(n_embd)
//   for each layer:
//     h = rmsnorm(x) ; q, k, v = h Wq, h Wk, h Wv ; rope(q, k) (halves)
//     x += attention(q, K, V) Wo                   (causal, 1/sqrt(head_dim))
//     h = rmsnorm(x) ; x += (gelu(h Wgate) * h Wup) Wdown
//   logits = rmsnorm(x) embed^T
#include <cmath>

#include "inference/gguf/gguf.h"
#include "inference/model/arch_common.h"

namespace qf::infer {

namespace {

class gemma_arch final : public architecture {
 public:
  std::string_view name() const override { return "gemma"; }

  void read_hparams(const gguf::file& f, hparams& hp) const override {
    read_llama_like_hparams(f, hp);
    hp.rope = rope_style::neox;
    hp.embd_scale = std::sqrt(static_cast<float>(hp.n_embd));
  }

  void load(const gguf::file&, weight_loader& ld, hparams& hp, model_weights& w) const override {
    load_llama_like_weights(ld, hp, w, tensor_set{.output = false, .rope_freqs = false});
  }

  bool forward(const model& m, context_state& s, const forward_batch& b) const override {
    forward_pass f(m, s, b);
    f.embed();                                    // x [n][E]
    f.be.scale(*s.x, f.hp.embd_scale, f.n * f.E);  // x *= sqrt(n_embd)

    for (int64_t il = 0; il < f.hp.n_layer; ++il) {
      if (f.cancelled()) return false;
      const layer_weights& L = f.layer(il);

      // attention block
      f.rms_norm(*L.attn_norm);  // xb [n][E]
      f.project_qkv(L, il);      // q [n][n_head][hd], k, v [n][n_head_kv][hd]
      f.rope_qk();
      f.attend(L, il);           // K, V -> each sequence's cache; xb = attention(q, K, V) Wo [n][E]
      f.add_residual();          // x += xb

      // feed-forward block (GeGLU)
      f.rms_norm(*L.ffn_norm);
      f.gated_ffn(L, glu::gelu);  // xb = (gelu(xb Wgate) * xb Wup) Wdown [n][E]
      f.add_residual();
    }

    if (b.n_out > 0) {
      f.output_rms_norm();  // xb     [n_out][E]
      f.classify();         // logits [n_out][n_vocab] (Wout = embed, always tied)
    }
    return true;
  }
};

}  // namespace

const architecture& gemma_architecture() {
  static const gemma_arch a;
  return a;
}

}  // namespace qf::infer
