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
#include <cmath>

#include "inference/gguf/gguf.h"
#include "inference/model/architecture.h"

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
    backend& be = m.be();
    const hparams& hp = m.hp();
    const model_weights& w = m.weights();
    const int64_t n = b.n_tokens;
    const int64_t E = hp.n_embd, F = hp.n_ff;
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

const architecture& llama_architecture() {
  static const llama_arch a;
  return a;
}

}  // namespace qf::infer
