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
#include <cmath>

#include "inference/gguf/gguf.h"
#include "inference/model/architecture.h"

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
    backend& be = m.be();
    const hparams& hp = m.hp();
    const model_weights& w = m.weights();
    const int64_t n = b.n_tokens;
    const int64_t E = hp.n_embd, F = hp.n_ff, Q = hp.n_embd_q(), KV = hp.n_embd_kv();
    const rope_params rp = rope_params_of(m);
    const attention_params ap{n, b.pos0, hp.n_head, hp.n_head_kv, hp.head_dim,
                              1.0f / std::sqrt(static_cast<float>(hp.head_dim)), s.kv_type, s.pos.get()};

    be.get_rows(*w.tok_embd, *s.ids, n, *s.x);  // x [n][E]

    for (int64_t il = 0; il < hp.n_layer; ++il) {
      if (b.cancel && b.cancel->is_cancelled()) return false;
      const layer_weights& L = w.layers[static_cast<size_t>(il)];

      // attention block
      be.rms_norm(*s.x, *L.attn_norm, *s.xb, n, E, hp.rms_eps);  // xb [n][E]
      be.matmul_many({{L.wq.get(), *s.q}, {L.wk.get(), *s.k}, {L.wv.get(), *s.v}}, *s.xb, n);  // q [n][n_head][hd], k, v [n][n_head_kv][hd]
      prefetch_attention(be, hp, s, b, il);
      be.add_bias(*s.q, *L.bq, n, Q);
      be.add_bias(*s.k, *L.bk, n, KV);
      be.add_bias(*s.v, *L.bv, n, KV);
      be.rope(*s.q, *s.pos, n, hp.n_head, hp.head_dim, rp);
      be.rope(*s.k, *s.pos, n, hp.n_head_kv, hp.head_dim, rp);
      store_and_attend(be, hp, s, b, il, ap);  // K, V -> each sequence's cache; att [n][n_head][hd]
      be.matmul(*L.wo, *s.att, n, *s.xb);                               // xb  [n][E]
      be.add(*s.x, *s.xb, *s.x, n * E);                                 // residual

      // feed-forward block (SwiGLU)
      be.rms_norm(*s.x, *L.ffn_norm, *s.xb, n, E, hp.rms_eps);  // xb   [n][E]
      be.matmul_many({{L.ffn_gate.get(), *s.gate}, {L.ffn_up.get(), *s.up}}, *s.xb, n);  // gate, up [n][F]
      be.swiglu(*s.gate, *s.up, *s.gate, n * F);                 // gate = silu(gate) * up
      be.matmul(*L.ffn_down, *s.gate, n, *s.xb);                 // xb   [n][E]
      be.add(*s.x, *s.xb, *s.x, n * E);                          // residual
    }

    // logits only for the last n_out rows
    if (b.n_out > 0) {
      const f32_ref last(*s.x, (n - b.n_out) * E);
      be.rms_norm(last, *w.output_norm, *s.xb, b.n_out, E, hp.rms_eps);  // xb     [n_out][E]
      be.matmul(w.classifier(), *s.xb, b.n_out, *s.logits);               // logits [n_out][n_vocab]
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
