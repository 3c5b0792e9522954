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
#include "inference/model/architecture.h"

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
    backend& be = m.be();
    const hparams& hp = m.hp();
    const model_weights& w = m.weights();
    const int64_t n = b.n_tokens;
    const int64_t E = hp.n_embd, F = hp.n_ff;
    const rope_params rp = rope_params_of(m);
    const attention_params ap{n, b.pos0, hp.n_head, hp.n_head_kv, hp.head_dim, hp.kq_scale(), s.kv_type, s.pos.get()};

    be.get_rows(*w.tok_embd, *s.ids, n, *s.x);  // x [n][E]
    be.scale(*s.x, hp.embd_scale, n * E);

    for (int64_t il = 0; il < hp.n_layer; ++il) {
      if (b.cancel && b.cancel->is_cancelled()) return false;
      const layer_weights& L = w.layers[static_cast<size_t>(il)];

      // attention block
      be.rms_norm(*s.x, *L.attn_norm, *s.xb, n, E, hp.rms_eps);
      be.matmul_many({{L.wq.get(), *s.q}, {L.wk.get(), *s.k}, {L.wv.get(), *s.v}}, *s.xb, n);  // q [n][n_head][hd], k, v [n][n_head_kv][hd]
      prefetch_attention(be, hp, s, b, il);
      be.rope(*s.q, *s.pos, n, hp.n_head, hp.head_dim, rp);
      be.rope(*s.k, *s.pos, n, hp.n_head_kv, hp.head_dim, rp);
      store_and_attend(be, hp, s, b, il, ap);  // K, V -> each sequence's cache; att [n][n_head][hd]
      be.matmul(*L.wo, *s.att, n, *s.xb);
      be.scale(*s.xb, hp.residual_scale, n * E);
      be.add(*s.x, *s.xb, *s.x, n * E);

      // feed-forward block (SwiGLU)
      be.rms_norm(*s.x, *L.ffn_norm, *s.xb, n, E, hp.rms_eps);
      be.matmul_many({{L.ffn_gate.get(), *s.gate}, {L.ffn_up.get(), *s.up}}, *s.xb, n);  // gate, up [n][F]
      be.swiglu(*s.gate, *s.up, *s.gate, n * F);
      be.matmul(*L.ffn_down, *s.gate, n, *s.xb);
      be.scale(*s.xb, hp.residual_scale, n * E);
      be.add(*s.x, *s.xb, *s.x, n * E);
    }

    if (b.n_out > 0) {
      const f32_ref last(*s.x, (n - b.n_out) * E);
      be.rms_norm(last, *w.output_norm, *s.xb, b.n_out, E, hp.rms_eps);
      be.matmul(w.classifier(), *s.xb, b.n_out, *s.logits);
      be.scale(*s.logits, 1.0f / hp.logit_scale, b.n_out * hp.n_vocab);
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
