// What llama-like architectures share: hyperparameters from "{arch}.*"
// metadata and the per-layer tensor set with llama.cpp's names. The forward
// passes themselves stay in each architecture's file.
#include <cmath>
#include <string>

#include "inference/gguf/gguf.h"
#include "inference/model/architecture.h"

namespace qf::infer {

namespace {
int64_t require_int(const gguf::file& f, const std::string& key) {
  auto v = f.get_int(key);
  if (!v) throw model_error("missing or non-integer metadata '" + key + "'");
  if (*v <= 0) throw model_error("metadata '" + key + "' must be positive, got " + std::to_string(*v));
  return *v;
}
int64_t opt_int(const gguf::file& f, const std::string& key, int64_t dflt) {
  auto v = f.get_int(key);
  if (!v) return dflt;
  if (*v <= 0) throw model_error("metadata '" + key + "' must be positive, got " + std::to_string(*v));
  return *v;
}
}  // namespace

void read_llama_like_hparams(const gguf::file& f, const weight_loader& ld, hparams& hp) {
  const std::string a = hp.arch + ".";
  hp.n_embd = require_int(f, a + "embedding_length");
  hp.n_layer = require_int(f, a + "block_count");
  hp.n_head = require_int(f, a + "attention.head_count");
  hp.n_head_kv = opt_int(f, a + "attention.head_count_kv", hp.n_head);
  hp.n_ff = require_int(f, a + "feed_forward_length");
  hp.n_ctx_train = opt_int(f, a + "context_length", 2048);
  if (hp.n_embd % hp.n_head != 0 && !f.get_int(a + "attention.key_length"))
    throw model_error("embedding_length " + std::to_string(hp.n_embd) + " is not a multiple of head_count " +
                      std::to_string(hp.n_head));
  hp.head_dim = opt_int(f, a + "attention.key_length", hp.n_embd / hp.n_head);
  if (auto vl = f.get_int(a + "attention.value_length"); vl && *vl != hp.head_dim)
    throw model_error("attention.value_length != key_length is not supported");
  hp.n_rot = opt_int(f, a + "rope.dimension_count", hp.head_dim);
  if (hp.n_rot > hp.head_dim || hp.n_rot % 2 != 0)
    throw model_error("rope.dimension_count " + std::to_string(hp.n_rot) + " must be even and <= head dim " +
                      std::to_string(hp.head_dim));
  if (hp.n_head % hp.n_head_kv != 0)
    throw model_error("head_count " + std::to_string(hp.n_head) + " is not a multiple of head_count_kv " +
                      std::to_string(hp.n_head_kv));
  if (auto eps = f.get_float(a + "attention.layer_norm_rms_epsilon")) hp.rms_eps = static_cast<float>(*eps);
  if (!(hp.rms_eps > 0) || !std::isfinite(hp.rms_eps)) throw model_error("invalid layer_norm_rms_epsilon");
  if (auto base = f.get_float(a + "rope.freq_base")) hp.rope_freq_base = static_cast<float>(*base);
  if (!(hp.rope_freq_base > 0) || !std::isfinite(hp.rope_freq_base)) throw model_error("invalid rope.freq_base");
  hp.rope_freq_scale = 1.0f;
  const auto type = f.get_string(a + "rope.scaling.type");
  if (type && *type != "none") {
    if (*type != "linear")
      throw model_error("rope scaling type '" + *type + "' is not supported (supported: none, linear)");
    auto factor = f.get_float(a + "rope.scaling.factor");
    if (factor && *factor > 0) hp.rope_freq_scale = static_cast<float>(1.0 / *factor);
  } else if (auto fs = f.get_float(a + "rope.scale_linear"); fs && *fs > 0) {  // older key
    hp.rope_freq_scale = static_cast<float>(1.0 / *fs);
  }
  hp.n_vocab = ld.rows_of("token_embd.weight", hp.n_embd);
  if (hp.n_vocab <= 0) {
    if (!ld.has("token_embd.weight")) throw model_error("missing tensor 'token_embd.weight'");
    throw model_error("tensor 'token_embd.weight' does not have rows of embedding_length " +
                      std::to_string(hp.n_embd));
  }
}

void load_llama_like_weights(weight_loader& ld, hparams& hp, model_weights& w, bool biases) {
  const int64_t E = hp.n_embd, Q = hp.n_embd_q(), KV = hp.n_embd_kv(), F = hp.n_ff, V = hp.n_vocab;
  w.tok_embd = ld.matrix("token_embd.weight", V, E);
  w.output_norm = ld.vector("output_norm.weight", E);
  if (ld.has("rope_freqs.weight")) w.rope_freqs = ld.vector("rope_freqs.weight", hp.n_rot / 2);
  hp.tied_embeddings = !ld.has("output.weight");
  if (!hp.tied_embeddings) w.output = ld.matrix("output.weight", V, E);
  w.layers.resize(static_cast<size_t>(hp.n_layer));
  for (int64_t il = 0; il < hp.n_layer; ++il) {
    const std::string p = "blk." + std::to_string(il) + ".";
    layer_weights& L = w.layers[static_cast<size_t>(il)];
    L.attn_norm = ld.vector(p + "attn_norm.weight", E);
    L.wq = ld.matrix(p + "attn_q.weight", Q, E);
    L.wk = ld.matrix(p + "attn_k.weight", KV, E);
    L.wv = ld.matrix(p + "attn_v.weight", KV, E);
    if (biases) {
      L.bq = ld.vector(p + "attn_q.bias", Q);
      L.bk = ld.vector(p + "attn_k.bias", KV);
      L.bv = ld.vector(p + "attn_v.bias", KV);
    }
    L.wo = ld.matrix(p + "attn_output.weight", E, Q);
    L.ffn_norm = ld.vector(p + "ffn_norm.weight", E);
    L.ffn_gate = ld.matrix(p + "ffn_gate.weight", F, E);
    L.ffn_up = ld.matrix(p + "ffn_up.weight", F, E);
    L.ffn_down = ld.matrix(p + "ffn_down.weight", E, F);
  }
}

rope_params rope_params_of(const model& m) {
  const hparams& hp = m.hp();
  return rope_params{hp.rope, hp.n_rot, hp.rope_freq_base, hp.rope_freq_scale, m.weights().rope_freqs.get()};
}

}  // namespace qf::infer
