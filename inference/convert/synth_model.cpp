// Synthetic random-weight GGUF models (see synth_model.h).
#include "inference/convert/synth_model.h"

#include <cmath>
#include <functional>
#include <optional>
#include <stdexcept>
#include <vector>

#include "inference/convert/synth_vocab.h"
#include "inference/convert/tensor_encode.h"
#include "inference/convert/token_type.h"
#include "inference/gguf/gguf.h"

namespace qf::infer::convert {
namespace {

uint64_t hash_name(uint64_t seed, const std::string& s) {
  uint64_t h = 1469598103934665603ull ^ seed;
  for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
  return h;
}

// xoshiro256+ seeded by splitmix64; Box-Muller for normals.
struct normal_rng {
  uint64_t s[4];
  explicit normal_rng(uint64_t seed) {
    for (auto& x : s) {
      uint64_t z = (seed += 0x9E3779B97F4A7C15ull);
      z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
      z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
      x = z ^ (z >> 31);
    }
  }
  uint64_t next() {
    const uint64_t r = s[0] + s[3], t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = (s[3] << 45) | (s[3] >> 19);
    return r;
  }
  double uniform() { return static_cast<double>((next() >> 11) + 1) * 0x1.0p-53; }  // (0, 1]
  void fill(float* out, size_t n, float mean, float std) {
    constexpr double two_pi = 6.283185307179586;
    for (size_t i = 0; i < n; i += 2) {
      double rad = std::sqrt(-2.0 * std::log(uniform())), th = two_pi * uniform();
      out[i] = static_cast<float>(mean + std * rad * std::cos(th));
      if (i + 1 < n) out[i + 1] = static_cast<float>(mean + std * rad * std::sin(th));
    }
  }
};

constexpr const char* k_supported = "supported: llama, qwen2, qwen3, starcoder2, gemma, granite";

uint32_t file_type_of(ggml_type t) {
  if (t == ggml_type::f32) return ft_all_f32;
  if (t == ggml_type::bf16) return ft_mostly_bf16;
  return ft_mostly_f16;
}

}  // namespace

synth_spec synth_preset(const std::string& preset, const std::string& arch) {
  synth_spec s;
  if (preset == "qwen2.5-coder-0.5b" || preset == "qwen2.5-coder-1.5b") {
    if (!arch.empty() && arch != "qwen2")
      throw std::invalid_argument("preset " + preset + " is a qwen2 model (got --arch " + arch + ")");
    s.arch = "qwen2";
    s.name = "synthetic " + preset;
    s.n_vocab = 151936;
    s.n_ctx = 32768;
    s.n_head_kv = 2;
    s.rope_base = 1000000.0f;
    s.rms_eps = 1e-6f;
    s.tied = true;
    s.qkv_bias = true;
    if (preset == "qwen2.5-coder-0.5b") {
      s.n_embd = 896, s.n_layer = 24, s.n_head = 14, s.n_ff = 4864;
    } else {
      s.n_embd = 1536, s.n_layer = 28, s.n_head = 12, s.n_ff = 8960;
    }
    return s;
  }
  if (preset == "tiny") {
    s.arch = arch.empty() ? "llama" : arch;
    s.name = "synthetic tiny " + s.arch;
    if (s.arch == "qwen2") {
      s.rope_base = 1000000.0f, s.rms_eps = 1e-6f, s.tied = true, s.qkv_bias = true;
    } else if (s.arch == "qwen3") {
      s.rope_base = 1000000.0f, s.rms_eps = 1e-6f, s.tied = true;
    } else if (s.arch == "starcoder2") {
      s.rope_base = 100000.0f, s.qkv_bias = true;
    } else if (s.arch == "gemma") {
      s.rms_eps = 1e-6f, s.tied = true;
    } else if (s.arch != "llama" && s.arch != "granite") {
      throw std::invalid_argument("unknown architecture '" + s.arch + "' (" + k_supported + ")");
    }
    return s;
  }
  throw std::invalid_argument("unknown preset '" + preset + "' (presets: qwen2.5-coder-0.5b, qwen2.5-coder-1.5b, tiny)");
}

void validate(const synth_spec& s) {
  auto range = [](const char* what, int64_t v, int64_t lo, int64_t hi) {
    if (v < lo || v > hi)
      throw std::invalid_argument(std::string(what) + " = " + std::to_string(v) + " is out of range " +
                                  std::to_string(lo) + ".." + std::to_string(hi));
  };
  if (s.arch != "llama" && s.arch != "qwen2" && s.arch != "qwen3" && s.arch != "starcoder2" && s.arch != "gemma" &&
      s.arch != "granite")
    throw std::invalid_argument("unknown architecture '" + s.arch + "' (" + k_supported + ")");
  if (s.arch == "gemma" && !s.tied) throw std::invalid_argument("gemma models always tie the classifier");
  range("vocab", s.n_vocab, 512, 1 << 24);
  range("dim", s.n_embd, 2, 1 << 16);
  range("layers", s.n_layer, 1, 512);
  range("heads", s.n_head, 1, 1024);
  range("kv-heads", s.n_head_kv, 1, 1024);
  range("ff", s.n_ff, 1, 1 << 18);
  range("ctx", s.n_ctx, 1, 1 << 24);
  if (s.n_embd % s.n_head != 0) throw std::invalid_argument("dim must be a multiple of heads");
  if (s.n_head % s.n_head_kv != 0) throw std::invalid_argument("heads must be a multiple of kv-heads");
  if (s.head_dim() % 2 != 0) throw std::invalid_argument("head size (dim / heads) must be even for RoPE");
  if (!(s.init_std > 0 && s.init_std < 10)) throw std::invalid_argument("init std must be in (0, 10)");
  if (s.emit_token >= 0) {
    range("emit-token", s.emit_token, 0, s.n_vocab - 1);
    if (s.tied) throw std::invalid_argument("a model that emits one token needs its own classifier (not tied)");
    if (s.arch != "llama" && s.arch != "qwen2" && s.arch != "qwen3")
      throw std::invalid_argument("a model that emits one token is made for llama, qwen2 and qwen3 only");
  }
  if (s.yarn_factor != 0 && !(s.yarn_factor >= 1 && s.yarn_factor <= 1024))
    throw std::invalid_argument("yarn factor must be in [1, 1024]");
  if (s.yarn_factor != 0) range("yarn original context", s.yarn_orig_ctx, 1, 1 << 24);
}

void write_synth_model(const synth_spec& s, ggml_type type, const std::string& out_path) {
  validate(s);
  if (type != ggml_type::f32 && type != ggml_type::f16 && type != ggml_type::bf16)
    throw std::invalid_argument("synthetic models are written as f32, f16 or bf16; quantize them afterwards");
  const std::string& a = s.arch;
  synth_vocab vocab = make_synth_vocab(s.n_vocab, s.seed);

  gguf::writer out;
  out.add_string("general.architecture", a);
  out.add_string("general.name", s.name);
  out.add_u32("general.file_type", file_type_of(type));
  out.add_u32(a + ".vocab_size", static_cast<uint32_t>(s.n_vocab));
  out.add_u32(a + ".context_length", static_cast<uint32_t>(s.n_ctx));
  out.add_u32(a + ".embedding_length", static_cast<uint32_t>(s.n_embd));
  out.add_u32(a + ".block_count", static_cast<uint32_t>(s.n_layer));
  out.add_u32(a + ".feed_forward_length", static_cast<uint32_t>(s.n_ff));
  out.add_u32(a + ".rope.dimension_count", static_cast<uint32_t>(s.head_dim()));
  out.add_u32(a + ".attention.head_count", static_cast<uint32_t>(s.n_head));
  out.add_u32(a + ".attention.head_count_kv", static_cast<uint32_t>(s.n_head_kv));
  const bool sc2 = a == "starcoder2";
  out.add_f32(a + (sc2 ? ".attention.layer_norm_epsilon" : ".attention.layer_norm_rms_epsilon"), s.rms_eps);
  out.add_f32(a + ".rope.freq_base", s.rope_base);
  if (s.yarn_factor != 0) {  // llama.cpp's YaRN keys; betas and ext_factor left at their defaults
    out.add_string(a + ".rope.scaling.type", "yarn");
    out.add_f32(a + ".rope.scaling.factor", s.yarn_factor);
    out.add_u32(a + ".rope.scaling.original_context_length", static_cast<uint32_t>(s.yarn_orig_ctx));
  }
  if (a == "granite") {  // multipliers of the size Granite 3 uses, scaled to a tiny model
    out.add_f32(a + ".embedding_scale", 12.0f);
    out.add_f32(a + ".residual_scale", 0.22f);
    out.add_f32(a + ".attention.scale", 0.125f);
    out.add_f32(a + ".logit_scale", 8.0f);
  }

  out.add_string("tokenizer.ggml.model", "gpt2");
  out.add_string("tokenizer.ggml.pre", a == "qwen2" || a == "qwen3" ? "qwen2" : "llama-bpe");
  out.add_string_array("tokenizer.ggml.tokens", vocab.tokens);
  out.add_i32_array("tokenizer.ggml.token_type", vocab.types);
  out.add_string_array("tokenizer.ggml.merges", vocab.merges);
  out.add_u32("tokenizer.ggml.bos_token_id", static_cast<uint32_t>(vocab.endoftext));
  out.add_u32("tokenizer.ggml.eos_token_id", static_cast<uint32_t>(vocab.endoftext));
  out.add_u32("tokenizer.ggml.padding_token_id", static_cast<uint32_t>(vocab.endoftext));
  out.add_bool("tokenizer.ggml.add_bos_token", a == "llama");
  out.add_u32("tokenizer.ggml.fim_pre_token_id", static_cast<uint32_t>(vocab.fim_pre));
  out.add_u32("tokenizer.ggml.fim_suf_token_id", static_cast<uint32_t>(vocab.fim_suf));
  out.add_u32("tokenizer.ggml.fim_mid_token_id", static_cast<uint32_t>(vocab.fim_mid));
  out.add_u32("tokenizer.ggml.fim_pad_token_id", static_cast<uint32_t>(vocab.fim_pad));
  out.add_u32("tokenizer.ggml.fim_rep_token_id", static_cast<uint32_t>(vocab.repo_name));
  out.add_u32("tokenizer.ggml.fim_sep_token_id", static_cast<uint32_t>(vocab.file_sep));
  vocab = synth_vocab{};

  // Tensors are produced while the writer streams them out: one in memory at a time.
  const uint64_t seed = s.seed;
  auto gen = [seed](const std::string& name, size_t n, float mean, float std) {
    std::vector<float> buf(n);
    normal_rng(hash_name(seed, name)).fill(buf.data(), n, mean, std);
    return buf;
  };
  const float init_std = s.init_std;
  const int64_t emit = s.emit_token;
  // With emit_token: the embedding rows are all e0, the blocks' output
  // projections zero, and the classifier reads e0 into the chosen token only.
  auto emit_values = [emit](const std::string& name, int64_t rows, int64_t cols) -> std::optional<std::vector<float>> {
    if (emit < 0) return std::nullopt;
    const bool embd = name == "token_embd.weight", cls = name == "output.weight";
    const bool zero = name.ends_with("attn_output.weight") || name.ends_with("ffn_down.weight");
    if (!embd && !cls && !zero) return std::nullopt;
    std::vector<float> v(static_cast<size_t>(rows * cols), 0.0f);
    if (embd)
      for (int64_t r = 0; r < rows; ++r) v[static_cast<size_t>(r * cols)] = 1.0f;
    if (cls) v[static_cast<size_t>(emit * cols)] = 1.0f;
    return v;
  };
  auto matrix = [&](const std::string& name, int64_t rows, int64_t cols) {
    ggml_type t = type;
    out.add_tensor(name, t, {cols, rows}, std::function<std::vector<uint8_t>()>([=] {
                     std::optional<std::vector<float>> fixed = emit_values(name, rows, cols);
                     return encode_rows(t, fixed ? std::move(*fixed) : gen(name, static_cast<size_t>(rows * cols), 0.0f, init_std),
                                        rows, cols);
                   }));
  };
  auto vector = [&](const std::string& name, int64_t n, float mean, float std) {
    out.add_tensor(name, ggml_type::f32, {n}, std::function<std::vector<uint8_t>()>([=] {
                     return encode_rows(ggml_type::f32, gen(name, static_cast<size_t>(n), mean, std), 1, n);
                   }));
  };
  const int64_t d = s.n_embd, hd = s.head_dim(), q_dim = s.n_head * hd, kv_dim = s.n_head_kv * hd;
  matrix("token_embd.weight", s.n_vocab, d);
  for (int64_t l = 0; l < s.n_layer; ++l) {
    std::string b = "blk." + std::to_string(l) + ".";
    vector(b + "attn_norm.weight", d, 1.0f, 0.1f);
    if (sc2) vector(b + "attn_norm.bias", d, 0.0f, s.init_std);
    matrix(b + "attn_q.weight", q_dim, d);
    matrix(b + "attn_k.weight", kv_dim, d);
    matrix(b + "attn_v.weight", kv_dim, d);
    if (s.qkv_bias) {
      vector(b + "attn_q.bias", q_dim, 0.0f, s.init_std);
      vector(b + "attn_k.bias", kv_dim, 0.0f, s.init_std);
      vector(b + "attn_v.bias", kv_dim, 0.0f, s.init_std);
    }
    if (a == "qwen3") {  // per-head q/k RMSNorm weights, spread so that they matter
      vector(b + "attn_q_norm.weight", hd, 1.0f, 0.3f);
      vector(b + "attn_k_norm.weight", hd, 1.0f, 0.3f);
    }
    matrix(b + "attn_output.weight", d, q_dim);
    if (sc2) vector(b + "attn_output.bias", d, 0.0f, s.init_std);
    vector(b + "ffn_norm.weight", d, 1.0f, 0.1f);
    if (sc2) vector(b + "ffn_norm.bias", d, 0.0f, s.init_std);
    if (!sc2) matrix(b + "ffn_gate.weight", s.n_ff, d);
    matrix(b + "ffn_up.weight", s.n_ff, d);
    if (sc2) vector(b + "ffn_up.bias", s.n_ff, 0.0f, s.init_std);
    matrix(b + "ffn_down.weight", d, s.n_ff);
    if (sc2) vector(b + "ffn_down.bias", d, 0.0f, s.init_std);
  }
  vector("output_norm.weight", d, 1.0f, 0.1f);
  if (sc2) vector("output_norm.bias", d, 0.0f, s.init_std);
  if (!s.tied) matrix("output.weight", s.n_vocab, d);
  out.write(out_path);
}

}  // namespace qf::infer::convert
