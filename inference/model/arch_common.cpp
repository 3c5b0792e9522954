// What llama-like architectures share: hyperparameters from "{arch}.*"
// metadata (bounded, and checked against the tensors, before anything is
// allocated from them), the per-layer tensor set with llama.cpp's names, and
// the blocks of a forward pass (arch_common.h). Each architecture's file
// strings the blocks together in the order of its pass.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <string_view>

#include "inference/gguf/gguf.h"
#include "inference/model/arch_common.h"

namespace qf::infer {

namespace {

// Bounds on what a file may claim, far above any released model (Llama 3.1
// 405B: n_embd 16384, 126 blocks, 128 heads, head dim 128, n_ff 53248; the
// largest vocabularies ~256k; Qwen2.5-1M: context 1010000). They stop a
// hostile file before anything is sized by it, and their products cannot
// overflow: checked below at compile time.
constexpr int64_t k_max_embd = int64_t{1} << 16;
constexpr int64_t k_max_layers = 1024;
constexpr int64_t k_max_heads = 1024;
constexpr int64_t k_max_head_dim = 4096;
constexpr int64_t k_max_ff = int64_t{1} << 20;
constexpr int64_t k_max_ctx = int64_t{1} << 24;
constexpr int64_t k_max_vocab = int64_t{1} << 22;
// KV cache of the training context in f32, K and V: layers x ctx x heads x head dim x 8 bytes.
static_assert(k_max_layers * k_max_ctx <= INT64_MAX / (k_max_heads * k_max_head_dim * 8),
              "the hyperparameter bounds must keep KV cache sizes inside int64");
static_assert(k_max_vocab * k_max_embd <= INT64_MAX / 4, "the hyperparameter bounds must keep tensor sizes in int64");

[[noreturn]] void out_of_range(const std::string& key, int64_t v, int64_t max) {
  throw model_error("metadata '" + key + "' = " + std::to_string(v) + " is out of range (1.." + std::to_string(max) +
                    ")");
}
int64_t require_int(const gguf::file& f, const std::string& key, int64_t max) {
  if (!f.find(key)) throw model_error("missing metadata '" + key + "'");
  auto v = f.get_int(key);
  if (!v) throw model_error("metadata '" + key + "' is not an integer (or exceeds int64)");
  if (*v <= 0 || *v > max) out_of_range(key, *v, max);
  return *v;
}
int64_t opt_int(const gguf::file& f, const std::string& key, int64_t dflt, int64_t max) {
  if (!f.find(key)) return dflt;
  return require_int(f, key, max);
}

// 1 + the largest N of the "blk.N." tensor names (0 when there are none).
int64_t blocks_in_file(const gguf::file& f) {
  int64_t n = 0;
  for (const auto& t : f.tensors()) {
    const std::string_view name = t.name;
    if (name.substr(0, 4) != "blk.") continue;
    int64_t v = 0;
    size_t i = 4;
    for (; i < name.size() && name[i] >= '0' && name[i] <= '9' && v <= k_max_layers; ++i)
      v = v * 10 + (name[i] - '0');
    if (i == 4 || i >= name.size() || name[i] != '.') continue;
    n = std::max(n, v + 1);
  }
  return n;
}
}  // namespace

float opt_float(const gguf::file& f, const std::string& key, float dflt, float lo, float hi) {
  if (!f.find(key)) return dflt;
  const auto v = f.get_float(key);
  if (!v) throw model_error("metadata '" + key + "' is not a number");
  if (!std::isfinite(*v) || *v < lo || *v > hi)
    throw model_error("metadata '" + key + "' = " + std::to_string(*v) + " is out of range (" + std::to_string(lo) +
                      ".." + std::to_string(hi) + ")");
  return static_cast<float>(*v);
}

void read_llama_like_hparams(const gguf::file& f, hparams& hp) {
  const std::string a = hp.arch + ".";
  hp.n_embd = require_int(f, a + "embedding_length", k_max_embd);
  hp.n_layer = require_int(f, a + "block_count", k_max_layers);
  if (const int64_t blocks = blocks_in_file(f); hp.n_layer > blocks)
    throw model_error("metadata '" + a + "block_count' = " + std::to_string(hp.n_layer) +
                      ", but the file has tensors for " + std::to_string(blocks) + " blocks");
  hp.n_head = require_int(f, a + "attention.head_count", k_max_heads);
  hp.n_head_kv = opt_int(f, a + "attention.head_count_kv", hp.n_head, hp.n_head);
  hp.n_ff = require_int(f, a + "feed_forward_length", k_max_ff);
  hp.n_ctx_train = opt_int(f, a + "context_length", 2048, k_max_ctx);
  if (hp.n_embd % hp.n_head != 0 && !f.find(a + "attention.key_length"))
    throw model_error("embedding_length " + std::to_string(hp.n_embd) + " is not a multiple of head_count " +
                      std::to_string(hp.n_head));
  hp.head_dim = opt_int(f, a + "attention.key_length", hp.n_embd / hp.n_head, k_max_head_dim);
  if (auto vl = f.get_int(a + "attention.value_length"); vl && *vl != hp.head_dim)
    throw model_error("attention.value_length != key_length is not supported");
  hp.n_rot = opt_int(f, a + "rope.dimension_count", hp.head_dim, hp.head_dim);
  if (hp.n_rot % 2 != 0)
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
  hp.n_ctx_orig = hp.n_ctx_train;
  const auto type = f.get_string(a + "rope.scaling.type");
  if (type && *type != "none") {
    if (*type != "linear" && *type != "yarn")
      throw model_error("rope scaling type '" + *type + "' is not supported (supported: none, linear, yarn)");
    auto factor = f.get_float(a + "rope.scaling.factor");
    if (factor && *factor > 0 && std::isfinite(*factor)) hp.rope_freq_scale = static_cast<float>(1.0 / *factor);
    if (*type == "yarn") {
      if (!factor || !(*factor >= 1) || !std::isfinite(*factor))
        throw model_error("rope scaling type 'yarn' needs '" + a + "rope.scaling.factor' >= 1");
      hp.n_ctx_orig = opt_int(f, a + "rope.scaling.original_context_length", hp.n_ctx_train, k_max_ctx);
      hp.rope_ext_factor = opt_float(f, a + "rope.scaling.yarn_ext_factor", 1.0f, 0.0f, 1.0f);
      hp.yarn_beta_fast = opt_float(f, a + "rope.scaling.yarn_beta_fast", 32.0f, 1e-3f, 1e4f);
      hp.yarn_beta_slow = opt_float(f, a + "rope.scaling.yarn_beta_slow", 1.0f, 1e-3f, 1e4f);
    }
  } else if (auto fs = f.get_float(a + "rope.scale_linear"); fs && *fs > 0 && std::isfinite(*fs)) {  // older key
    hp.rope_freq_scale = static_cast<float>(1.0 / *fs);
  }
  // llama.cpp writes the YaRN magnitude as rope.scaling.attn_factor (older
  // files: yarn_attn_factor); it multiplies cos and sin whatever the scaling.
  hp.rope_attn_factor = opt_float(f, a + "rope.scaling.attn_factor",
                                  opt_float(f, a + "rope.scaling.yarn_attn_factor", 1.0f, 1e-3f, 1e3f), 1e-3f, 1e3f);
  const gguf::tensor_info* embd = f.find_tensor("token_embd.weight");
  if (!embd) throw model_error("missing tensor 'token_embd.weight'");
  if (embd->ne.empty() || embd->ne[0] != hp.n_embd)
    throw model_error("tensor 'token_embd.weight' does not have rows of embedding_length " +
                      std::to_string(hp.n_embd));
  hp.n_vocab = embd->n_rows();
  if (hp.n_vocab <= 0 || hp.n_vocab > k_max_vocab)
    throw model_error("tensor 'token_embd.weight' has " + std::to_string(hp.n_vocab) +
                      " rows (vocabulary size), out of range (1.." + std::to_string(k_max_vocab) + ")");
}

namespace {
// One pass over the tensor set; see load_llama_like_weights.
void llama_like_tensors(weight_loader& ld, hparams& hp, model_weights& w, const tensor_set& ts) {
  const int64_t E = hp.n_embd, Q = hp.n_embd_q(), KV = hp.n_embd_kv(), F = hp.n_ff, V = hp.n_vocab;
  w.tok_embd = ld.matrix("token_embd.weight", V, E);
  w.output_norm = ld.vector("output_norm.weight", E);
  if (ts.norm_bias) w.output_norm_b = ld.vector("output_norm.bias", E);
  if (ts.rope_freqs && ld.has("rope_freqs.weight")) w.rope_freqs = ld.vector("rope_freqs.weight", hp.n_rot / 2);
  hp.tied_embeddings = !ts.output || !ld.has("output.weight");
  if (!hp.tied_embeddings) w.output = ld.matrix("output.weight", V, E);
  w.layers.resize(static_cast<size_t>(hp.n_layer));
  for (int64_t il = 0; il < hp.n_layer; ++il) {
    const std::string p = "blk." + std::to_string(il) + ".";
    layer_weights& L = w.layers[static_cast<size_t>(il)];
    L.attn_norm = ld.vector(p + "attn_norm.weight", E);
    if (ts.norm_bias) L.attn_norm_b = ld.vector(p + "attn_norm.bias", E);
    L.wq = ld.matrix(p + "attn_q.weight", Q, E);
    L.wk = ld.matrix(p + "attn_k.weight", KV, E);
    L.wv = ld.matrix(p + "attn_v.weight", KV, E);
    if (ts.qkv_bias) {
      L.bq = ld.vector(p + "attn_q.bias", Q);
      L.bk = ld.vector(p + "attn_k.bias", KV);
      L.bv = ld.vector(p + "attn_v.bias", KV);
    }
    if (ts.qk_norm) {
      L.q_norm = ld.vector(p + "attn_q_norm.weight", hp.head_dim);
      L.k_norm = ld.vector(p + "attn_k_norm.weight", hp.head_dim);
    }
    L.wo = ld.matrix(p + "attn_output.weight", E, Q);
    if (ts.o_bias) L.bo = ld.vector(p + "attn_output.bias", E);
    L.ffn_norm = ld.vector(p + "ffn_norm.weight", E);
    if (ts.norm_bias) L.ffn_norm_b = ld.vector(p + "ffn_norm.bias", E);
    if (ts.ffn_gate) L.ffn_gate = ld.matrix(p + "ffn_gate.weight", F, E);
    L.ffn_up = ld.matrix(p + "ffn_up.weight", F, E);
    if (ts.ffn_bias) L.ffn_up_b = ld.vector(p + "ffn_up.bias", F);
    L.ffn_down = ld.matrix(p + "ffn_down.weight", E, F);
    if (ts.ffn_bias) L.ffn_down_b = ld.vector(p + "ffn_down.bias", E);
  }
}
}  // namespace

void load_llama_like_weights(weight_loader& ld, hparams& hp, model_weights& w, const tensor_set& ts) {
  // The first pass only checks every tensor (presence, shape, type) and then
  // that the file has no tensor the architecture does not use, so a file that
  // fails anywhere fails before anything is uploaded; the second uploads.
  model_weights checked;
  ld.set_check_only(true);
  llama_like_tensors(ld, hp, checked, ts);
  ld.require_all_used(hp.arch);
  ld.set_check_only(false);
  llama_like_tensors(ld, hp, w, ts);
}

rope_params rope_params_of(const model& m) {
  const hparams& hp = m.hp();
  rope_params rp{hp.rope, hp.n_rot, hp.rope_freq_base, hp.rope_freq_scale, m.weights().rope_freqs.get()};
  rp.ext_factor = hp.rope_ext_factor;
  rp.attn_factor = hp.rope_attn_factor;
  if (rp.ext_factor != 0)
    yarn_corr_dims(hp.n_rot, hp.n_ctx_orig, hp.rope_freq_base, hp.yarn_beta_fast, hp.yarn_beta_slow, rp.corr_low,
                   rp.corr_high);
  return rp;
}

float hparams::kq_scale() const {
  return attn_scale > 0 ? attn_scale : 1.0f / std::sqrt(static_cast<float>(head_dim));
}

void prefetch_attention(backend& be, const hparams& hp, const context_state& s, const forward_batch& b, int64_t il) {
  // The first blocks of each sequence's cells (the backend takes up to tens of KiB).
  constexpr size_t k_ahead_bytes = 64 << 10;
  const size_t row_bytes = row_size(s.kv_type, hp.n_embd_kv()).value_or(0);
  for (const forward_segment& seg : b.segments) {
    const int64_t bc = seg.table.block_cells, cells = seg.pos0 + seg.n_rows;
    const buffer& kc = *(*seg.k_cache)[static_cast<size_t>(il)];
    const buffer& vc = *(*seg.v_cache)[static_cast<size_t>(il)];
    size_t asked = 0;
    for (int64_t blk = 0; blk * bc < cells && blk < static_cast<int64_t>(seg.blocks_host.size()) && asked < k_ahead_bytes;
         ++blk) {
      const size_t bytes = static_cast<size_t>(std::min(bc, cells - blk * bc)) * row_bytes;
      const size_t off = static_cast<size_t>(seg.blocks_host[static_cast<size_t>(blk)]) * static_cast<size_t>(bc) * row_bytes;
      be.prefetch(kc, off, bytes);
      be.prefetch(vc, off, bytes);
      asked += bytes;
    }
  }
  be.prefetch(*s.att, 0, static_cast<size_t>(b.n_tokens * hp.n_embd_q()) * sizeof(float));
}

void store_and_attend(backend& be, const hparams& hp, context_state& s, const forward_batch& b, int64_t il,
                      const attention_params& ap) {
  const int64_t KV = hp.n_embd_kv(), Q = hp.n_embd_q();
  for (const forward_segment& seg : b.segments) {
    buffer& kc = *(*seg.k_cache)[static_cast<size_t>(il)];
    buffer& vc = *(*seg.v_cache)[static_cast<size_t>(il)];
    be.kv_store(f32_ref(*s.k, seg.row0 * KV), seg.n_rows, KV, kc, s.kv_type, *seg.pos, seg.table);  // positions pos0..
    be.kv_store(f32_ref(*s.v, seg.row0 * KV), seg.n_rows, KV, vc, s.kv_type, *seg.pos, seg.table);
    attention_params sp = ap;
    sp.n_tokens = seg.n_rows;
    sp.pos0 = seg.pos0;
    sp.pos = seg.pos;
    sp.table = seg.table;
    be.attention(f32_ref(*s.q, seg.row0 * Q), kc, vc, f32_ref(*s.att, seg.row0 * Q), sp);  // att rows [n_rows][n_head][hd]
  }
}

forward_pass::forward_pass(const model& m, context_state& st, const forward_batch& fb)
    : be(m.be()),
      hp(m.hp()),
      w(m.weights()),
      s(st),
      b(fb),
      n(fb.n_tokens),
      E(m.hp().n_embd),
      rp(rope_params_of(m)),
      ap{fb.n_tokens, fb.pos0, hp.n_head, hp.n_head_kv, hp.head_dim, hp.kq_scale(), st.kv_type, st.pos.get()} {}

void forward_pass::embed() const { be.get_rows(*w.tok_embd, *s.ids, n, *s.x); }

void forward_pass::rms_norm(const buffer& weight) const { be.rms_norm(*s.x, weight, *s.xb, n, E, hp.rms_eps); }

void forward_pass::layer_norm(const buffer& weight, const buffer* bias) const {
  be.layer_norm(*s.x, weight, bias, *s.xb, n, E, hp.rms_eps);
}

void forward_pass::project_qkv(const layer_weights& L, int64_t il) const {
  be.matmul_many({{L.wq.get(), *s.q}, {L.wk.get(), *s.k}, {L.wv.get(), *s.v}}, *s.xb, n);
  prefetch_attention(be, hp, s, b, il);
}

void forward_pass::add_qkv_bias(const layer_weights& L) const {
  be.add_bias(*s.q, *L.bq, n, hp.n_embd_q());
  be.add_bias(*s.k, *L.bk, n, hp.n_embd_kv());
  be.add_bias(*s.v, *L.bv, n, hp.n_embd_kv());
}

void forward_pass::rope_qk() const {
  be.rope(*s.q, *s.pos, n, hp.n_head, hp.head_dim, rp);
  be.rope(*s.k, *s.pos, n, hp.n_head_kv, hp.head_dim, rp);
}

void forward_pass::attend(const layer_weights& L, int64_t il) const {
  store_and_attend(be, hp, s, b, il, ap);  // att [n][n_head][hd]
  be.matmul(*L.wo, *s.att, n, *s.xb);
}

void forward_pass::gated_ffn(const layer_weights& L, glu act) const {
  const int64_t F = hp.n_ff;
  be.matmul_many({{L.ffn_gate.get(), *s.gate}, {L.ffn_up.get(), *s.up}}, *s.xb, n);  // gate, up [n][F]
  if (act == glu::silu)
    be.swiglu(*s.gate, *s.up, *s.gate, n * F);  // gate = silu(gate) * up
  else
    be.geglu(*s.gate, *s.up, *s.gate, n * F);  // gate = gelu(gate) * up
  be.matmul(*L.ffn_down, *s.gate, n, *s.xb);
}

void forward_pass::add_residual() const { be.add(*s.x, *s.xb, *s.x, n * E); }

f32_ref forward_pass::last_rows() const { return f32_ref(*s.x, (n - b.n_out) * E); }

void forward_pass::output_rms_norm() const {
  be.rms_norm(last_rows(), *w.output_norm, *s.xb, b.n_out, E, hp.rms_eps);
}

void forward_pass::classify() const { be.matmul(w.classifier(), *s.xb, b.n_out, *s.logits); }

}  // namespace qf::infer
