// Synthetic models for the engine tests (see synthetic.h).
#include "tests/inference/model/synthetic.h"

#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <random>

#include "inference/backend/cpu/ops.h"
#include "inference/gguf/gguf.h"

namespace qf::test {

namespace {

std::vector<float> rnd(std::mt19937& g, size_t n, float scale) {
  std::uniform_real_distribution<float> d(-scale, scale);
  std::vector<float> v(n);
  for (auto& x : v) x = d(g);
  return v;
}

std::vector<float> norm_weights(std::mt19937& g, size_t n) {
  std::uniform_real_distribution<float> d(0.8f, 1.2f);
  std::vector<float> v(n);
  for (auto& x : v) x = d(g);
  return v;
}

// GPT-2's byte -> printable code point map, as UTF-8.
std::string byte_to_unicode(int b) {
  int cp;
  if ((b >= 33 && b <= 126) || (b >= 161 && b <= 172) || (b >= 174 && b <= 255)) {
    cp = b;
  } else {
    int n = 0;
    for (int c = 0; c < b; ++c)
      if (!((c >= 33 && c <= 126) || (c >= 161 && c <= 172) || (c >= 174 && c <= 255))) ++n;
    cp = 256 + n;
  }
  std::string s;
  if (cp < 0x80) {
    s += static_cast<char>(cp);
  } else {
    s += static_cast<char>(0xC0 | (cp >> 6));
    s += static_cast<char>(0x80 | (cp & 0x3F));
  }
  return s;
}

struct vocab {
  std::vector<std::string> tokens;
  std::vector<float> scores;
  std::vector<int32_t> types;
  std::vector<std::string> merges;
};

vocab spm_vocab() {
  vocab v;
  auto add = [&](std::string t, float score, int32_t type) {
    v.tokens.push_back(std::move(t));
    v.scores.push_back(score);
    v.types.push_back(type);
  };
  add("<unk>", 0, 2);
  add("<s>", 0, 3);
  add("</s>", 0, 3);
  for (int b = 0; b < 256; ++b) {
    char buf[8];
    std::snprintf(buf, sizeof buf, "<0x%02X>", b);
    add(buf, 0, 6);
  }
  const char* pieces[] = {"\xE2\x96\x81", "e", "t", "a", "o", "n", "\xE2\x96\x81t", "he", "\xE2\x96\x81the",
                          "in", "\xE2\x96\x81\x61", "er", "on", "\xE2\x96\x81s", "re", "at", "nd", "or"};
  float score = -1;
  for (const char* p : pieces) add(p, score--, 1);
  return v;
}

vocab bpe_vocab() {
  vocab v;
  for (int b = 0; b < 256; ++b) {
    v.tokens.push_back(byte_to_unicode(b));
    v.types.push_back(1);
  }
  const char* merges[][2] = {{"\xC4\xA0", "t"}, {"h", "e"}, {"i", "n"}, {"\xC4\xA0t", "he"}, {"e", "r"}, {"o", "n"}};
  for (auto& m : merges) {
    v.merges.push_back(std::string(m[0]) + " " + m[1]);
    v.tokens.push_back(std::string(m[0]) + m[1]);
    v.types.push_back(1);
  }
  for (const char* s : {"<|endoftext|>", "<|fim_prefix|>", "<|fim_middle|>", "<|fim_suffix|>"}) {
    v.tokens.push_back(s);
    v.types.push_back(3);
  }
  return v;
}

std::vector<uint8_t> encode(infer::ggml_type t, const std::vector<float>& w, int64_t rows, int64_t cols) {
  const size_t row_bytes = *infer::row_size(t, cols);
  std::vector<uint8_t> out(row_bytes * rows);
  if (t == infer::ggml_type::f32) {
    std::memcpy(out.data(), w.data(), out.size());
  } else {
    for (int64_t r = 0; r < rows; ++r) infer::cpu::quantize_row(t, w.data() + r * cols, out.data() + r * row_bytes, cols);
  }
  return out;
}

std::vector<uint8_t> f32_bytes(const std::vector<float>& v) {
  std::vector<uint8_t> out(v.size() * 4);
  std::memcpy(out.data(), v.data(), out.size());
  return out;
}

bool bpe_arch(const std::string& a) { return a == "qwen2" || a == "qwen3" || a == "starcoder2"; }

}  // namespace

int64_t head_dim_of(const synth_config& c) { return c.head_dim > 0 ? c.head_dim : c.n_embd / c.n_head; }

synth_model make_synth(const synth_config& cfg) {
  synth_model m;
  m.cfg = cfg;
  m.tokens = bpe_arch(cfg.arch) ? bpe_vocab().tokens : spm_vocab().tokens;
  m.n_vocab = static_cast<int64_t>(m.tokens.size());
  std::mt19937 g(cfg.seed);
  const int64_t E = cfg.n_embd, hd = head_dim_of(cfg), Q = cfg.n_head * hd, KV = cfg.n_head_kv * hd, F = cfg.n_ff;
  const bool sc2 = cfg.arch == "starcoder2";
  const float se = 1.0f / std::sqrt(static_cast<float>(E)), sf = 1.0f / std::sqrt(static_cast<float>(F));
  m.tok_embd = rnd(g, m.n_vocab * E, 1.0f);
  m.output_norm = norm_weights(g, E);
  if (sc2) m.output_norm_b = rnd(g, E, 0.3f);
  if (!cfg.tied) m.output = rnd(g, m.n_vocab * E, se);
  if (cfg.rope_freqs)
    for (int64_t i = 0; i < hd / 2; ++i) m.rope_freqs.push_back(1.0f + static_cast<float>(i % 4) * 2.5f);
  for (int64_t l = 0; l < cfg.n_layer; ++l) {
    synth_layer L;
    L.attn_norm = norm_weights(g, E);
    if (sc2) L.attn_norm_b = rnd(g, E, 0.3f);
    L.wq = rnd(g, Q * E, se * 2);  // larger q/k spread makes attention non-uniform
    L.wk = rnd(g, KV * E, se * 2);
    L.wv = rnd(g, KV * E, se);
    if (cfg.arch == "qwen2" || sc2) {
      L.bq = rnd(g, Q, 0.5f);
      L.bk = rnd(g, KV, 0.5f);
      L.bv = rnd(g, KV, 0.5f);
    }
    if (cfg.arch == "qwen3") {
      // Spread so that a forgotten norm, or one over the wrong rows, shows.
      std::uniform_real_distribution<float> d(0.3f, 2.5f);
      for (int64_t i = 0; i < hd; ++i) L.q_norm.push_back(d(g));
      for (int64_t i = 0; i < hd; ++i) L.k_norm.push_back(d(g));
    }
    L.wo = rnd(g, E * Q, se);
    if (sc2) L.bo = rnd(g, E, 0.3f);
    L.ffn_norm = norm_weights(g, E);
    if (sc2) L.ffn_norm_b = rnd(g, E, 0.3f);
    if (!sc2) L.gate = rnd(g, F * E, se);
    L.up = rnd(g, F * E, se);
    if (sc2) L.up_b = rnd(g, F, 0.5f);
    L.down = rnd(g, E * F, sf);
    if (sc2) L.down_b = rnd(g, E, 0.3f);
    m.layers.push_back(std::move(L));
  }
  return m;
}

void write_gguf(const synth_model& m, const std::string& path, const write_options& opts) {
  const synth_config& c = m.cfg;
  infer::gguf::writer w;
  const std::string arch = opts.arch_override.empty() ? c.arch : opts.arch_override;
  w.add_string("general.architecture", arch);
  w.add_string("general.name", "synthetic " + c.arch);
  const std::string a = c.arch + ".";
  w.add_u32(a + "context_length", static_cast<uint32_t>(c.n_ctx_train));
  w.add_u32(a + "embedding_length", static_cast<uint32_t>(c.n_embd));
  w.add_u32(a + "block_count", static_cast<uint32_t>(c.n_layer));
  w.add_u32(a + "feed_forward_length", static_cast<uint32_t>(c.n_ff));
  w.add_u32(a + "attention.head_count", static_cast<uint32_t>(c.n_head));
  w.add_u32(a + "attention.head_count_kv", static_cast<uint32_t>(c.n_head_kv));
  if (c.arch == "starcoder2")
    w.add_f32(a + "attention.layer_norm_epsilon", c.rms_eps);
  else
    w.add_f32(a + "attention.layer_norm_rms_epsilon", c.rms_eps);
  w.add_f32(a + "rope.freq_base", c.rope_base);
  if (c.head_dim > 0) {
    w.add_u32(a + "attention.key_length", static_cast<uint32_t>(c.head_dim));
    w.add_u32(a + "attention.value_length", static_cast<uint32_t>(c.head_dim));
  }
  if (c.yarn) {
    w.add_string(a + "rope.scaling.type", "yarn");
    w.add_f32(a + "rope.scaling.factor", c.yarn_factor);
    w.add_u32(a + "rope.scaling.original_context_length", static_cast<uint32_t>(c.yarn_orig_ctx));
    if (c.yarn_attn_factor > 0) w.add_f32(a + "rope.scaling.attn_factor", c.yarn_attn_factor);
    w.add_f32(a + "rope.scaling.yarn_beta_fast", c.yarn_beta_fast);
    w.add_f32(a + "rope.scaling.yarn_beta_slow", c.yarn_beta_slow);
  }
  if (c.arch == "granite") {
    w.add_f32(a + "embedding_scale", c.embd_scale);
    w.add_f32(a + "residual_scale", c.residual_scale);
    w.add_f32(a + "attention.scale", c.attn_scale);
    w.add_f32(a + "logit_scale", c.logit_scale);
  }

  if (bpe_arch(c.arch)) {
    vocab v = bpe_vocab();
    w.add_string("tokenizer.ggml.model", "gpt2");
    w.add_string("tokenizer.ggml.pre", "qwen2");
    w.add_string_array("tokenizer.ggml.tokens", v.tokens);
    w.add_i32_array("tokenizer.ggml.token_type", v.types);
    w.add_string_array("tokenizer.ggml.merges", v.merges);
    w.add_u32("tokenizer.ggml.eos_token_id", 262);
    w.add_bool("tokenizer.ggml.add_bos_token", false);
  } else {
    vocab v = spm_vocab();
    w.add_string("tokenizer.ggml.model", "llama");
    w.add_string_array("tokenizer.ggml.tokens", v.tokens);
    w.add_f32_array("tokenizer.ggml.scores", v.scores);
    w.add_i32_array("tokenizer.ggml.token_type", v.types);
    w.add_u32("tokenizer.ggml.bos_token_id", 1);
    w.add_u32("tokenizer.ggml.eos_token_id", 2);
    w.add_u32("tokenizer.ggml.unknown_token_id", 0);
  }

  for (const auto& [key, value] : opts.set_u64) w.add_u64(key, value);

  auto matrix = [&](const std::string& name, const std::vector<float>& v, int64_t rows, int64_t cols) {
    if (opts.omit.count(name)) return;
    if (opts.misshape == name) {
      std::vector<float> bigger(v);
      bigger.resize(v.size() + cols, 0.5f);
      w.add_tensor(name, c.wtype, {cols, rows + 1}, encode(c.wtype, bigger, rows + 1, cols));
      return;
    }
    w.add_tensor(name, c.wtype, {cols, rows}, encode(c.wtype, v, rows, cols));
  };
  auto vec = [&](const std::string& name, const std::vector<float>& v) {
    if (opts.omit.count(name)) return;
    w.add_tensor(name, infer::ggml_type::f32, {static_cast<int64_t>(v.size())}, f32_bytes(v));
  };
  const int64_t E = c.n_embd, hd = head_dim_of(c), Q = c.n_head * hd, KV = c.n_head_kv * hd, F = c.n_ff;
  auto opt_vec = [&](const std::string& name, const std::vector<float>& v) {
    if (!v.empty()) vec(name, v);
  };
  matrix("token_embd.weight", m.tok_embd, m.n_vocab, E);
  vec("output_norm.weight", m.output_norm);
  opt_vec("output_norm.bias", m.output_norm_b);
  if (!c.tied) matrix("output.weight", m.output, m.n_vocab, E);
  if (!m.rope_freqs.empty()) vec("rope_freqs.weight", m.rope_freqs);
  for (int64_t l = 0; l < c.n_layer; ++l) {
    const synth_layer& L = m.layers[l];
    const std::string p = "blk." + std::to_string(l) + ".";
    vec(p + "attn_norm.weight", L.attn_norm);
    opt_vec(p + "attn_norm.bias", L.attn_norm_b);
    matrix(p + "attn_q.weight", L.wq, Q, E);
    matrix(p + "attn_k.weight", L.wk, KV, E);
    matrix(p + "attn_v.weight", L.wv, KV, E);
    opt_vec(p + "attn_q.bias", L.bq);
    opt_vec(p + "attn_k.bias", L.bk);
    opt_vec(p + "attn_v.bias", L.bv);
    opt_vec(p + "attn_q_norm.weight", L.q_norm);
    opt_vec(p + "attn_k_norm.weight", L.k_norm);
    matrix(p + "attn_output.weight", L.wo, E, Q);
    opt_vec(p + "attn_output.bias", L.bo);
    vec(p + "ffn_norm.weight", L.ffn_norm);
    opt_vec(p + "ffn_norm.bias", L.ffn_norm_b);
    if (!L.gate.empty()) matrix(p + "ffn_gate.weight", L.gate, F, E);
    matrix(p + "ffn_up.weight", L.up, F, E);
    opt_vec(p + "ffn_up.bias", L.up_b);
    matrix(p + "ffn_down.weight", L.down, E, F);
    opt_vec(p + "ffn_down.bias", L.down_b);
  }
  for (const auto& [name, len] : opts.extra) vec(name, std::vector<float>(static_cast<size_t>(len), 1.0f));
  w.write(path);
}

std::string temp_path(const std::string& name) {
  auto dir = std::filesystem::temp_directory_path() / ("qf_model_test_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  return (dir / name).string();
}

}  // namespace qf::test
