// The converters as a library: the synthetic BPE vocabulary (sizes, special
// ids at Qwen2.5-Coder's positions, every merge reachable), synthetic model
// files (metadata, tensor shapes, a tokenizer that loads and round-trips), the
// llama2.c converter's input checks; and `gguf quantize` on a synthetic model.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <unordered_map>

#include "inference/backend/cpu/ops.h"
#include "inference/convert/llama2c.h"
#include "inference/convert/synth_model.h"
#include "inference/convert/synth_vocab.h"
#include "inference/gguf/gguf.h"
#include "inference/tokenizer/tokenizer.h"
#include "tests/server/cli/tool_runner.h"

namespace qf::test {
namespace {

using namespace qf::infer;

void check_vocab(const convert::synth_vocab& v, int64_t n) {
  ASSERT_EQ(static_cast<int64_t>(v.tokens.size()), n);
  ASSERT_EQ(v.types.size(), v.tokens.size());
  std::unordered_map<std::string, size_t> id;
  for (size_t i = 0; i < v.tokens.size(); ++i) ASSERT_TRUE(id.emplace(v.tokens[i], i).second) << v.tokens[i];
  for (size_t r = 0; r < v.merges.size(); ++r) {
    const std::string& m = v.merges[r];
    size_t sp = m.find(' ');
    ASSERT_NE(sp, std::string::npos) << m;
    std::string a = m.substr(0, sp), b = m.substr(sp + 1);
    ASSERT_TRUE(id.count(a) && id.count(b) && id.count(a + b)) << "merge " << r << ": " << m;
    EXPECT_LT(id[a], id[a + b]);
    EXPECT_LT(id[b], id[a + b]);
  }
}

TEST(SynthVocab, SmallVocabularyIsConsistent) {
  auto v = convert::make_synth_vocab(1000, 3);
  check_vocab(v, 1000);
  EXPECT_EQ(v.tokens[v.fim_pre], "<|fim_prefix|>");
  EXPECT_EQ(v.tokens[v.file_sep], "<|file_sep|>");
  EXPECT_EQ(v.file_sep, 999);
  EXPECT_THROW(convert::make_synth_vocab(100, 1), std::invalid_argument);
}

TEST(SynthVocab, QwenSizedVocabularyPutsSpecialsAtQwenIds) {
  auto v = convert::make_synth_vocab(151936, 1);
  check_vocab(v, 151936);
  EXPECT_EQ(v.endoftext, 151643);
  EXPECT_EQ(v.fim_pre, 151659);
  EXPECT_EQ(v.fim_mid, 151660);
  EXPECT_EQ(v.fim_suf, 151661);
  EXPECT_EQ(v.fim_pad, 151662);
  EXPECT_EQ(v.repo_name, 151663);
  EXPECT_EQ(v.file_sep, 151664);
  EXPECT_EQ(v.tokens[151659], "<|fim_prefix|>");
  EXPECT_EQ(v.tokens[151935], "[PAD151935]");
}

TEST(SynthModel, PresetsHaveQwenShapes) {
  auto s = convert::synth_preset("qwen2.5-coder-0.5b", "");
  EXPECT_EQ(s.arch, "qwen2");
  EXPECT_EQ(s.n_embd, 896);
  EXPECT_EQ(s.n_layer, 24);
  EXPECT_EQ(s.n_head, 14);
  EXPECT_EQ(s.n_head_kv, 2);
  EXPECT_EQ(s.head_dim(), 64);
  EXPECT_EQ(s.n_ff, 4864);
  EXPECT_EQ(s.n_vocab, 151936);
  EXPECT_TRUE(s.tied && s.qkv_bias);
  auto b = convert::synth_preset("qwen2.5-coder-1.5b", "qwen2");
  EXPECT_EQ(b.n_embd, 1536);
  EXPECT_EQ(b.n_layer, 28);
  EXPECT_EQ(b.n_head, 12);
  EXPECT_EQ(b.n_ff, 8960);
  EXPECT_THROW(convert::synth_preset("qwen2.5-coder-0.5b", "llama"), std::invalid_argument);
  EXPECT_THROW(convert::synth_preset("nope", ""), std::invalid_argument);
}

TEST(SynthModel, WritesStandardQwen2FileWithLoadableTokenizer) {
  std::string path = scratch_dir("synth_lib") + "/q.gguf";
  auto s = convert::synth_preset("tiny", "qwen2");
  s.n_vocab = 800;
  convert::write_synth_model(s, ggml_type::f16, path);
  auto f = gguf::file::open(path);
  EXPECT_EQ(f->get_string("general.architecture"), "qwen2");
  EXPECT_EQ(f->get_int("qwen2.embedding_length"), 64);
  EXPECT_EQ(f->get_int("qwen2.attention.head_count_kv"), 2);
  const auto* q = f->find_tensor("blk.1.attn_q.weight");
  ASSERT_NE(q, nullptr);
  EXPECT_EQ(q->type, ggml_type::f16);
  EXPECT_EQ(q->ne, (std::vector<int64_t>{64, 64}));
  const auto* kb = f->find_tensor("blk.0.attn_k.bias");
  ASSERT_NE(kb, nullptr);
  EXPECT_EQ(kb->type, ggml_type::f32);
  EXPECT_EQ(kb->ne, (std::vector<int64_t>{32}));
  EXPECT_EQ(f->find_tensor("output.weight"), nullptr);  // tied
  EXPECT_EQ(f->find_tensor("token_embd.weight")->ne, (std::vector<int64_t>{64, 800}));

  auto tok = tokenizer::from_gguf(*f);
  EXPECT_EQ(tok->n_vocab(), 800);
  EXPECT_EQ(tok->special().fim_pre, 800 - 6);
  EXPECT_EQ(tok->special().fim_sep, 799);
  const std::string text = "int main(void) {\n  return fib(10) + 0x7f; // ok\n}\n";
  auto ids = tok->encode(text, false);
  EXPECT_LT(ids.size(), text.size());  // merges apply
  EXPECT_EQ(tok->decode(ids), text);
}

TEST(SynthModel, SameSeedSameWeightsWhateverTheType) {
  std::string dir = scratch_dir("synth_seed");
  auto s = convert::synth_preset("tiny", "llama");
  convert::write_synth_model(s, ggml_type::f32, dir + "/a.gguf");
  convert::write_synth_model(s, ggml_type::f16, dir + "/b.gguf");
  s.seed = 2;
  convert::write_synth_model(s, ggml_type::f32, dir + "/c.gguf");
  auto a = gguf::file::open(dir + "/a.gguf"), b = gguf::file::open(dir + "/b.gguf"),
       c = gguf::file::open(dir + "/c.gguf");
  const auto* ta = a->find_tensor("blk.0.ffn_up.weight");
  const auto* tb = b->find_tensor("blk.0.ffn_up.weight");
  const float* fa = reinterpret_cast<const float*>(a->tensor_data(*ta));
  const fp16_t* hb = reinterpret_cast<const fp16_t*>(b->tensor_data(*tb));
  double sum2 = 0;
  for (int64_t i = 0; i < ta->n_elements(); ++i) {
    EXPECT_EQ(f32_to_fp16(fa[i]), hb[i]);
    sum2 += double(fa[i]) * fa[i];
  }
  EXPECT_NEAR(std::sqrt(sum2 / ta->n_elements()), 0.02, 0.002);  // N(0, 0.02)
  EXPECT_NE(std::memcmp(fa, c->tensor_data(*c->find_tensor("blk.0.ffn_up.weight")), 64), 0);
}

TEST(Quantize, QuantizedFileDequantizesCloseToTheOriginal) {
  std::string dir = scratch_dir("quantize");
  auto s = convert::synth_preset("tiny", "llama");
  s.n_embd = 256, s.n_ff = 512, s.n_head = 4, s.n_head_kv = 2;
  convert::write_synth_model(s, ggml_type::f32, dir + "/f32.gguf");
  // Through the command, as users run it.
  for (auto [scheme, bound] : {std::pair{std::string("q8_0"), 1e-4}, {std::string("q4_k_m"), 1e-2}}) {
    run_result r = run_quickfill({"gguf", "quantize", dir + "/f32.gguf", dir + "/q.gguf", scheme, "-t", "2"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    auto a = gguf::file::open(dir + "/f32.gguf"), q = gguf::file::open(dir + "/q.gguf");
    ASSERT_EQ(a->tensors().size(), q->tensors().size());
    EXPECT_EQ(q->get_int("general.quantization_version"), 2);
    EXPECT_EQ(q->get_int("llama.block_count"), 2);
    for (const auto& t : a->tensors()) {
      const auto* u = q->find_tensor(t.name);
      ASSERT_NE(u, nullptr) << t.name;
      ASSERT_EQ(u->ne, t.ne);
      if (t.ne.size() == 1) {
        EXPECT_EQ(u->type, ggml_type::f32) << t.name;
        continue;
      }
      EXPECT_NE(u->type, ggml_type::f32) << t.name;
      const int64_t cols = t.ne[0], rows = t.n_rows();
      std::vector<float> row(static_cast<size_t>(cols));
      const float* ref = reinterpret_cast<const float*>(a->tensor_data(t));
      const size_t rb = u->n_bytes / static_cast<size_t>(rows);
      double err = 0, sig = 0;
      for (int64_t r = 0; r < rows; ++r) {
        cpu::dequantize_row(u->type, q->tensor_data(*u) + r * rb, row.data(), cols);
        for (int64_t c = 0; c < cols; ++c) {
          double d = row[c] - ref[r * cols + c];
          err += d * d;
          sig += double(ref[r * cols + c]) * ref[r * cols + c];
        }
      }
      EXPECT_LT(err / sig, bound) << t.name << " as " << traits(u->type).name;
    }
    if (scheme == "q4_k_m") {
      EXPECT_EQ(q->find_tensor("blk.0.attn_q.weight")->type, ggml_type::q4_k);
      EXPECT_EQ(q->find_tensor("blk.1.ffn_down.weight")->type, ggml_type::q6_k);
      EXPECT_EQ(q->find_tensor("output.weight")->type, ggml_type::q6_k);
    }
  }
}

TEST(Llama2cConverter, RejectsBadInputsWithClearErrors) {
  std::string dir = scratch_dir("l2c_bad");
  auto expect_error = [&](const std::string& ckpt, const std::string& tok, const std::string& needle) {
    try {
      convert::convert_llama2c(ckpt, tok, dir + "/out.gguf", ggml_type::f32);
      ADD_FAILURE() << "no error, expected one mentioning '" << needle << "'";
    } catch (const convert::convert_error& e) {
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
  };
  int32_t hdr[7] = {64, 172, 5, 8, 4, 512, 512};
  std::string good_hdr(reinterpret_cast<const char*>(hdr), sizeof hdr);
  write_file(dir + "/short.bin", good_hdr + std::string(1000, '\0'));
  int32_t bad[7] = {64, 172, 5, 0, 4, 512, 512};
  write_file(dir + "/badheads.bin", std::string(reinterpret_cast<const char*>(bad), sizeof bad));
  write_file(dir + "/tiny.bin", "abc");
  write_file(dir + "/tok.bin", std::string("\x10\0\0\0", 4));
  expect_error(dir + "/missing.bin", dir + "/tok.bin", "cannot open");
  expect_error(dir + "/tiny.bin", dir + "/tok.bin", "too short");
  expect_error(dir + "/badheads.bin", dir + "/tok.bin", "n_heads");
  expect_error(dir + "/short.bin", dir + "/tok.bin", "truncated");
}

}  // namespace
}  // namespace qf::test
