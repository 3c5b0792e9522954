// starcoder2: StarCoder2 (3B, 7B, 15B).
//
// LayerNorm with weight and bias (eps from starcoder2.attention.
// layer_norm_epsilon) instead of RMSNorm; biases on the q/k/v and output
// projections; a plain (ungated) MLP with GELU (tanh approximation, as
// llama.cpp's ggml_gelu) and biases on both of its projections; NEOX rope;
// grouped-query attention; a tied classifier when output.weight is absent.
//
//   x = embed(tokens)
//   for each layer:
//     h = layernorm(x) ; q, k, v = h Wq + bq, h Wk + bk, h Wv + bv ; rope(q, k) (halves)
//     x += attention(q, K, V) Wo + bo                   (causal, grouped-query)
//     h = layernorm(x) ; x += gelu(h Wup + bup) Wdown + bdown
//   logits = layernorm(x) Wout                          (Wout = embed when tied)
#include <cmath>

#include "inference/gguf/gguf.h"
#include "inference/model/architecture.h"

namespace qf::infer {

namespace {

class starcoder2_arch final : public architecture {
 public:
  std::string_view name() const override { return "starcoder2"; }

  void read_hparams(const gguf::file& f, hparams& hp) const override {
    read_llama_like_hparams(f, hp);
    const std::string key = hp.arch + ".attention.layer_norm_epsilon";
    if (!f.find(key)) throw model_error("missing metadata '" + key + "'");
    hp.rms_eps = opt_float(f, key, 1e-5f, 1e-12f, 1.0f);  // the LayerNorm eps
    hp.rope = rope_style::neox;
  }

  void load(const gguf::file&, weight_loader& ld, hparams& hp, model_weights& w) const override {
    load_llama_like_weights(ld, hp, w,
                            tensor_set{.qkv_bias = true, .o_bias = true, .norm_bias = true, .ffn_gate = false,
                                       .ffn_bias = true, .rope_freqs = false});
  }

  bool forward(const model& m, context_state& s, const forward_batch& b) const override {
    backend& be = m.be();
    const hparams& hp = m.hp();
    const model_weights& w = m.weights();
    const int64_t n = b.n_tokens;
    const int64_t E = hp.n_embd, F = hp.n_ff, Q = hp.n_embd_q(), KV = hp.n_embd_kv();
    const rope_params rp = rope_params_of(m);
    const attention_params ap{n, b.pos0, hp.n_head, hp.n_head_kv, hp.head_dim, hp.kq_scale(), s.kv_type, s.pos.get()};

    be.get_rows(*w.tok_embd, *s.ids, n, *s.x);  // x [n][E]

    for (int64_t il = 0; il < hp.n_layer; ++il) {
      if (b.cancel && b.cancel->is_cancelled()) return false;
      const layer_weights& L = w.layers[static_cast<size_t>(il)];

      // attention block
      be.layer_norm(*s.x, *L.attn_norm, L.attn_norm_b.get(), *s.xb, n, E, hp.rms_eps);  // xb [n][E]
      be.matmul_many({{L.wq.get(), *s.q}, {L.wk.get(), *s.k}, {L.wv.get(), *s.v}}, *s.xb, n);  // q [n][n_head][hd], k, v [n][n_head_kv][hd]
      prefetch_attention(be, hp, s, b, il);
      be.add_bias(*s.q, *L.bq, n, Q);
      be.add_bias(*s.k, *L.bk, n, KV);
      be.add_bias(*s.v, *L.bv, n, KV);
      be.rope(*s.q, *s.pos, n, hp.n_head, hp.head_dim, rp);
      be.rope(*s.k, *s.pos, n, hp.n_head_kv, hp.head_dim, rp);
      store_and_attend(be, hp, s, b, il, ap);  // K, V -> each sequence's cache; att [n][n_head][hd]
      be.matmul(*L.wo, *s.att, n, *s.xb);
      be.add_bias(*s.xb, *L.bo, n, E);
      be.add(*s.x, *s.xb, *s.x, n * E);

      // feed-forward block (GELU MLP, no gate)
      be.layer_norm(*s.x, *L.ffn_norm, L.ffn_norm_b.get(), *s.xb, n, E, hp.rms_eps);
      be.matmul(*L.ffn_up, *s.xb, n, *s.up);  // up [n][F]
      be.add_bias(*s.up, *L.ffn_up_b, n, F);
      be.gelu(*s.up, *s.up, n * F);
      be.matmul(*L.ffn_down, *s.up, n, *s.xb);
      be.add_bias(*s.xb, *L.ffn_down_b, n, E);
      be.add(*s.x, *s.xb, *s.x, n * E);
    }

    if (b.n_out > 0) {
      const f32_ref last(*s.x, (n - b.n_out) * E);
      be.layer_norm(last, *w.output_norm, w.output_norm_b.get(), *s.xb, b.n_out, E, hp.rms_eps);
      be.matmul(w.classifier(), *s.xb, b.n_out, *s.logits);
    }
    return true;
  }
};

}  // namespace

const architecture& starcoder2_architecture() {
  static const starcoder2_arch a;
  return a;
}

}  // namespace qf::infer
