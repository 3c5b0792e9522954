// granite: IBM Granite 3.x dense (and Granite Code in llama.cpp's granite
// layout).
//
// The llama block (adjacent-pair rope, SwiGLU) with four multipliers from
// metadata, each required as llama.cpp requires them (0 meaning none):
// granite.embedding_scale multiplies the token embeddings,
// granite.residual_scale each block's output before it joins the residual,
// granite.attention.scale replaces 1/sqrt(head_dim) as the q.k scale, and the
// logits are divided by granite.logit_scale.
//
//   x = embed(tokens) * embedding_scale
//   for each layer:
//     h = rmsnorm(x) ; q, k, v = h Wq, h Wk, h Wv ; rope(q, k) (adjacent pairs)
//     x += (attention(q, K, V; attention_scale) Wo) * residual_scale
//     h = rmsnorm(x) ; x += ((silu(h Wgate) * h Wup) Wdown) * residual_scale
//   logits = rmsnorm(x) Wout / logit_scale         (Wout = embed when tied)
#include "inference/gguf/gguf.h"
#include "inference/model/arch_common.h"

namespace qf::infer {

namespace {

// A multiplier llama.cpp requires; 0 there means "none" (dflt).
float required_scale(const gguf::file& f, const std::string& key, float dflt) {
  if (!f.find(key)) throw model_error("missing metadata '" + key + "'");
  const float v = opt_float(f, key, dflt, 0.0f, 1e6f);
  return v == 0.0f ? dflt : v;
}

class granite_arch final : public architecture {
 public:
  std::string_view name() const override { return "granite"; }

  void read_hparams(const gguf::file& f, hparams& hp) const override {
    read_llama_like_hparams(f, hp);
    hp.rope = rope_style::norm;
    const std::string a = hp.arch + ".";
    hp.embd_scale = required_scale(f, a + "embedding_scale", 1.0f);
    hp.residual_scale = required_scale(f, a + "residual_scale", 1.0f);
    hp.attn_scale = required_scale(f, a + "attention.scale", 0.0f);  // 0: 1 / sqrt(head_dim)
    hp.logit_scale = required_scale(f, a + "logit_scale", 1.0f);
  }

  void load(const gguf::file&, weight_loader& ld, hparams& hp, model_weights& w) const override {
    load_llama_like_weights(ld, hp, w, tensor_set{});
  }

  bool forward(const model& m, context_state& s, const forward_batch& b) const override {
    forward_pass f(m, s, b);
    const hparams& hp = f.hp;
    const int64_t n = f.n, E = f.E;
    f.embed();                                 // x [n][E]
    f.be.scale(*s.x, hp.embd_scale, n * E);    // x *= embedding_scale

    for (int64_t il = 0; il < hp.n_layer; ++il) {
      if (f.cancelled()) return false;
      const layer_weights& L = f.layer(il);

      // attention block
      f.rms_norm(*L.attn_norm);  // xb [n][E]
      f.project_qkv(L, il);      // q [n][n_head][hd], k, v [n][n_head_kv][hd]
      f.rope_qk();
      f.attend(L, il);           // K, V -> each sequence's cache; xb = attention(q, K, V; attention_scale) Wo
      f.be.scale(*s.xb, hp.residual_scale, n * E);  // xb *= residual_scale
      f.add_residual();                              // x += xb

      // feed-forward block (SwiGLU)
      f.rms_norm(*L.ffn_norm);
      f.gated_ffn(L, glu::silu);  // xb = (silu(xb Wgate) * xb Wup) Wdown [n][E]
      f.be.scale(*s.xb, hp.residual_scale, n * E);
      f.add_residual();
    }

    if (b.n_out > 0) {
      f.output_rms_norm();  // xb     [n_out][E]
      f.classify();         // logits [n_out][n_vocab]
      f.be.scale(*s.logits, 1.0f / hp.logit_scale, b.n_out * hp.n_vocab);  // logits /= logit_scale
    }
    return true;
  }
};

}  // namespace

const architecture& granite_architecture() {
  static const granite_arch a;
  return a;
}

}  // namespace qf::infer
