// llama2.c checkpoint + tokenizer.bin -> GGUF `llama` (see llama2c.h for the
// format facts). Every size read from the inputs is checked before use.
#include "inference/convert/llama2c.h"

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "inference/convert/tensor_encode.h"
#include "inference/convert/token_type.h"
#include "inference/gguf/gguf.h"

namespace qf::infer::convert {
namespace {

std::vector<uint8_t> read_all(const std::string& path, const char* what) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in) throw convert_error(std::string("cannot open ") + what + " '" + path + "'");
  auto size = static_cast<std::streamoff>(in.tellg());
  if (size < 0) throw convert_error(std::string("cannot read ") + what + " '" + path + "'");
  std::vector<uint8_t> buf(static_cast<size_t>(size));
  in.seekg(0);
  if (!in.read(reinterpret_cast<char*>(buf.data()), size))
    throw convert_error(std::string("cannot read ") + what + " '" + path + "'");
  return buf;
}

llama2c_config parse_config(const uint8_t* p, size_t n, const std::string& path) {
  if (n < 7 * sizeof(int32_t))
    throw convert_error("'" + path + "' is too short for a llama2.c header (7 int32)");
  int32_t h[7];
  std::memcpy(h, p, sizeof h);
  llama2c_config c;
  c.dim = h[0];
  c.hidden_dim = h[1];
  c.n_layers = h[2];
  c.n_heads = h[3];
  c.n_kv_heads = h[4];
  c.shared_classifier = h[5] > 0;
  c.vocab_size = h[5] > 0 ? h[5] : (h[5] == INT32_MIN ? 0 : -h[5]);
  c.seq_len = h[6];
  auto check = [&](const char* field, int64_t v, int64_t max) {
    if (v <= 0 || v > max)
      throw convert_error("llama2.c header of '" + path + "': " + field + " = " + std::to_string(v) +
                          " is out of range (1.." + std::to_string(max) + ")");
  };
  check("dim", c.dim, 1 << 16);
  check("hidden_dim", c.hidden_dim, 1 << 18);
  check("n_layers", c.n_layers, 1024);
  check("n_heads", c.n_heads, 1024);
  check("n_kv_heads", c.n_kv_heads, 1024);
  check("vocab_size", c.vocab_size, 1 << 22);
  check("seq_len", c.seq_len, 1 << 22);
  if (c.dim % c.n_heads != 0)
    throw convert_error("llama2.c header: dim " + std::to_string(c.dim) + " is not a multiple of n_heads " +
                        std::to_string(c.n_heads));
  if (c.n_heads % c.n_kv_heads != 0)
    throw convert_error("llama2.c header: n_heads " + std::to_string(c.n_heads) +
                        " is not a multiple of n_kv_heads " + std::to_string(c.n_kv_heads));
  if ((c.dim / c.n_heads) % 2 != 0) throw convert_error("llama2.c header: head size must be even for RoPE");
  return c;
}

bool is_byte_token(const std::string& s) {
  if (s.size() != 6 || s.compare(0, 3, "<0x") != 0 || s[5] != '>') return false;
  auto hex = [](char ch) { return (ch >= '0' && ch <= '9') || (ch >= 'A' && ch <= 'F') || (ch >= 'a' && ch <= 'f'); };
  return hex(s[3]) && hex(s[4]);
}

}  // namespace

llama2c_config read_llama2c_config(const std::string& checkpoint_path) {
  std::ifstream in(checkpoint_path, std::ios::binary);
  if (!in) throw convert_error("cannot open checkpoint '" + checkpoint_path + "'");
  uint8_t buf[28];
  in.read(reinterpret_cast<char*>(buf), sizeof buf);
  return parse_config(buf, static_cast<size_t>(in.gcount()), checkpoint_path);
}

llama2c_vocab read_llama2c_vocab(const std::string& tokenizer_path, int32_t vocab_size) {
  auto buf = read_all(tokenizer_path, "tokenizer");
  size_t off = 0;
  auto need = [&](size_t n, const std::string& what) {
    if (n > buf.size() - off)
      throw convert_error("tokenizer '" + tokenizer_path + "' is truncated (" + what + ")");
  };
  need(4, "max_token_length");
  int32_t max_len = 0;
  std::memcpy(&max_len, buf.data(), 4);
  off = 4;
  if (max_len <= 0 || max_len > (1 << 16))
    throw convert_error("tokenizer '" + tokenizer_path + "': max_token_length " + std::to_string(max_len) +
                        " is out of range");
  llama2c_vocab v;
  v.tokens.reserve(vocab_size);
  for (int32_t i = 0; i < vocab_size; ++i) {
    std::string at = "token " + std::to_string(i);
    need(8, at);
    float score;
    int32_t len;
    std::memcpy(&score, buf.data() + off, 4);
    std::memcpy(&len, buf.data() + off + 4, 4);
    off += 8;
    if (len < 0 || len > max_len)
      throw convert_error("tokenizer '" + tokenizer_path + "': " + at + " has length " + std::to_string(len) +
                          " (max_token_length " + std::to_string(max_len) + ")");
    need(static_cast<size_t>(len), at);
    std::string text(reinterpret_cast<const char*>(buf.data() + off), static_cast<size_t>(len));
    off += static_cast<size_t>(len);

    int32_t type = tt_normal;
    if (i == 0 && text == "<unk>") {
      type = tt_unknown;
    } else if (text == "\n<s>\n" || text == "<s>") {
      text = "<s>";
      type = tt_control;
    } else if (text == "\n</s>\n" || text == "</s>") {
      text = "</s>";
      type = tt_control;
    } else if (is_byte_token(text)) {
      type = tt_byte;
    } else {
      std::string t;  // the exporter wrote U+2581 as ' '; restore it
      for (char ch : text) {
        if (ch == ' ')
          t += "\xE2\x96\x81";
        else
          t += ch;
      }
      text = std::move(t);
    }
    v.tokens.push_back(std::move(text));
    v.scores.push_back(score);
    v.types.push_back(type);
  }
  if (off != buf.size())
    std::fprintf(stderr, "warning: tokenizer '%s' has %zu bytes after %d tokens\n", tokenizer_path.c_str(),
                 buf.size() - off, vocab_size);
  return v;
}

void convert_llama2c(const std::string& checkpoint_path, const std::string& tokenizer_path,
                     const std::string& out_path, ggml_type type, const std::string& name) {
  if (type != ggml_type::f32 && type != ggml_type::f16)
    throw convert_error("from-llama2c writes f32 or f16; quantize the result afterwards");
  gguf::check_not_input(checkpoint_path, out_path);
  gguf::check_not_input(tokenizer_path, out_path);
  auto buf = read_all(checkpoint_path, "checkpoint");
  llama2c_config c = parse_config(buf.data(), buf.size(), checkpoint_path);

  const int64_t dim = c.dim, hidden = c.hidden_dim, L = c.n_layers, head = c.dim / c.n_heads;
  const int64_t kv_dim = head * c.n_kv_heads, V = c.vocab_size;
  // Offsets in floats of each llama2.c array, in file order.
  int64_t expected = V * dim + L * dim + L * dim * dim + 2 * L * dim * kv_dim + L * dim * dim + L * dim +
                     3 * L * dim * hidden + dim + c.seq_len * head;
  if (!c.shared_classifier) expected += V * dim;
  const size_t have = (buf.size() - 28) / sizeof(float);
  if (static_cast<int64_t>(have) < expected)
    throw convert_error("checkpoint '" + checkpoint_path + "' is truncated: the header implies " +
                        std::to_string(expected) + " floats of weights, the file has " + std::to_string(have));
  llama2c_vocab vocab = read_llama2c_vocab(tokenizer_path, c.vocab_size);
  std::vector<float> w(static_cast<size_t>(expected));
  std::memcpy(w.data(), buf.data() + 28, w.size() * sizeof(float));
  buf.clear();
  buf.shrink_to_fit();

  const float* p = w.data();
  auto take = [&](int64_t n) {
    const float* r = p;
    p += n;
    return r;
  };
  const float* tok_emb = take(V * dim);
  const float* rms_att = take(L * dim);
  const float* wq = take(L * dim * dim);
  const float* wk = take(L * dim * kv_dim);
  const float* wv = take(L * dim * kv_dim);
  const float* wo = take(L * dim * dim);
  const float* rms_ffn = take(L * dim);
  const float* w1 = take(L * dim * hidden);
  const float* w2 = take(L * hidden * dim);
  const float* w3 = take(L * dim * hidden);
  const float* rms_final = take(dim);
  take(c.seq_len * head);  // freq_cis_real and freq_cis_imag, unused
  const float* wcls = c.shared_classifier ? nullptr : take(V * dim);

  gguf::writer out;
  out.protect_input(checkpoint_path);
  out.protect_input(tokenizer_path);
  std::string model_name = name.empty() ? std::filesystem::path(checkpoint_path).stem().string() : name;
  out.add_string("general.architecture", "llama");
  out.add_string("general.name", model_name);
  out.add_u32("general.file_type", type == ggml_type::f32 ? ft_all_f32 : ft_mostly_f16);
  out.add_u32("llama.vocab_size", static_cast<uint32_t>(V));
  out.add_u32("llama.context_length", static_cast<uint32_t>(c.seq_len));
  out.add_u32("llama.embedding_length", static_cast<uint32_t>(dim));
  out.add_u32("llama.block_count", static_cast<uint32_t>(L));
  out.add_u32("llama.feed_forward_length", static_cast<uint32_t>(hidden));
  out.add_u32("llama.rope.dimension_count", static_cast<uint32_t>(head));
  out.add_u32("llama.attention.head_count", static_cast<uint32_t>(c.n_heads));
  out.add_u32("llama.attention.head_count_kv", static_cast<uint32_t>(c.n_kv_heads));
  out.add_f32("llama.attention.layer_norm_rms_epsilon", 1e-5f);
  out.add_f32("llama.rope.freq_base", 10000.0f);
  out.add_string("tokenizer.ggml.model", "llama");
  out.add_string_array("tokenizer.ggml.tokens", vocab.tokens);
  out.add_f32_array("tokenizer.ggml.scores", vocab.scores);
  out.add_i32_array("tokenizer.ggml.token_type", vocab.types);
  out.add_u32("tokenizer.ggml.bos_token_id", 1);
  out.add_u32("tokenizer.ggml.eos_token_id", 2);
  out.add_u32("tokenizer.ggml.unknown_token_id", 0);
  out.add_bool("tokenizer.ggml.add_bos_token", true);
  out.add_bool("tokenizer.ggml.add_eos_token", false);

  auto matrix = [&](const std::string& tname, const float* data, int64_t rows, int64_t cols) {
    ggml_type t = storage_type(type, false);
    out.add_tensor(tname, t, {cols, rows},
                   encode_rows(t, std::span<const float>(data, static_cast<size_t>(rows * cols)), rows, cols));
  };
  auto vector = [&](const std::string& tname, const float* data, int64_t n) {
    out.add_tensor(tname, ggml_type::f32, {n},
                   encode_rows(ggml_type::f32, std::span<const float>(data, static_cast<size_t>(n)), 1, n));
  };
  matrix("token_embd.weight", tok_emb, V, dim);
  for (int64_t l = 0; l < L; ++l) {
    std::string b = "blk." + std::to_string(l) + ".";
    vector(b + "attn_norm.weight", rms_att + l * dim, dim);
    matrix(b + "attn_q.weight", wq + l * dim * dim, dim, dim);
    matrix(b + "attn_k.weight", wk + l * dim * kv_dim, kv_dim, dim);
    matrix(b + "attn_v.weight", wv + l * dim * kv_dim, kv_dim, dim);
    matrix(b + "attn_output.weight", wo + l * dim * dim, dim, dim);
    vector(b + "ffn_norm.weight", rms_ffn + l * dim, dim);
    matrix(b + "ffn_gate.weight", w1 + l * dim * hidden, hidden, dim);
    matrix(b + "ffn_down.weight", w2 + l * hidden * dim, dim, hidden);
    matrix(b + "ffn_up.weight", w3 + l * dim * hidden, hidden, dim);
  }
  vector("output_norm.weight", rms_final, dim);
  if (wcls) matrix("output.weight", wcls, V, dim);
  out.write(out_path);
}

}  // namespace qf::infer::convert
