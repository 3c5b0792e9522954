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
#include "inference/gguf/gguf.h"
#include "inference/model/arch_common.h"

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
    forward_pass f(m, s, b);
    backend& be = f.be;
    const int64_t n = f.n, E = f.E, F = f.hp.n_ff;
    f.embed();  // x [n][E]

    for (int64_t il = 0; il < f.hp.n_layer; ++il) {
      if (f.cancelled()) return false;
      const layer_weights& L = f.layer(il);

      // attention block
      f.layer_norm(*L.attn_norm, L.attn_norm_b.get());  // xb [n][E]
      f.project_qkv(L, il);                              // q [n][n_head][hd], k, v [n][n_head_kv][hd]
      f.add_qkv_bias(L);                                 // q += bq, k += bk, v += bv
      f.rope_qk();
      f.attend(L, il);  // K, V -> each sequence's cache; xb = attention(q, K, V) Wo [n][E]
      be.add_bias(*s.xb, *L.bo, n, E);  // xb += bo
      f.add_residual();                  // x += xb

      // feed-forward block (GELU MLP, no gate)
      f.layer_norm(*L.ffn_norm, L.ffn_norm_b.get());
      be.matmul(*L.ffn_up, *s.xb, n, *s.up);  // up [n][F]
      be.add_bias(*s.up, *L.ffn_up_b, n, F);
      be.gelu(*s.up, *s.up, n * F);
      be.matmul(*L.ffn_down, *s.up, n, *s.xb);  // xb [n][E]
      be.add_bias(*s.xb, *L.ffn_down_b, n, E);
      f.add_residual();
    }

    if (b.n_out > 0) {
      be.layer_norm(f.last_rows(), *f.w.output_norm, f.w.output_norm_b.get(), *s.xb, b.n_out, E,
                    f.hp.rms_eps);  // xb     [n_out][E]
      f.classify();                 // logits [n_out][n_vocab]
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
