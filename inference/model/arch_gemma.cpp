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
#include "inference/model/architecture.h"

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
      be.add(*s.x, *s.xb, *s.x, n * E);

      // feed-forward block (GeGLU)
      be.rms_norm(*s.x, *L.ffn_norm, *s.xb, n, E, hp.rms_eps);
      be.matmul_many({{L.ffn_gate.get(), *s.gate}, {L.ffn_up.get(), *s.up}}, *s.xb, n);  // gate, up [n][F]
      be.geglu(*s.gate, *s.up, *s.gate, n * F);  // gate = gelu(gate) * up
      be.matmul(*L.ffn_down, *s.gate, n, *s.xb);
      be.add(*s.x, *s.xb, *s.x, n * E);
    }

    if (b.n_out > 0) {
      const f32_ref last(*s.x, (n - b.n_out) * E);
      be.rms_norm(last, *w.output_norm, *s.xb, b.n_out, E, hp.rms_eps);
      be.matmul(w.classifier(), *s.xb, b.n_out, *s.logits);
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
