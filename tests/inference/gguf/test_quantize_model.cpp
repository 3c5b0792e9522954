// Whole-model quantization: per-tensor type choice of each recipe (the
// Q4_K_M layer rule, classifier, fallbacks, 1-D tensors), metadata copy and
// file type, and the quantized weights decode close to the originals.
#include <gtest/gtest.h>

#include <cstring>
#include <tuple>

#include "inference/backend/cpu/ops.h"
#include "inference/gguf/gguf.h"
#include "inference/convert/quantize_model.h"
#include "tests/temp_file.h"
#include "tests/inference/backend/cpu/kernel_test_util.h"

using namespace qf::infer;
using namespace qf::infer::gguf;

namespace {

std::vector<uint8_t> f32_bytes(const std::vector<float>& v) {
  std::vector<uint8_t> b(v.size() * 4);
  std::memcpy(b.data(), v.data(), b.size());
  return b;
}

// A small llama-like F32 model with 8 layers and untied output.
void write_model(const std::string& path, bool tied) {
  writer w;
  w.add_string("general.architecture", "llama");
  w.add_u32("llama.block_count", 8);
  w.add_string_array("tokenizer.ggml.tokens", {"a", "b"});
  uint32_t seed = 1;
  auto mat = [&](const std::string& name, int64_t cols, int64_t rows) {
    w.add_tensor(name, ggml_type::f32, {cols, rows}, f32_bytes(qf::test::random_floats(cols * rows, seed++)));
  };
  mat("token_embd.weight", 256, 8);
  if (!tied) mat("output.weight", 256, 8);
  w.add_tensor("output_norm.weight", ggml_type::f32, {256}, f32_bytes(std::vector<float>(256, 1.0f)));
  for (int i = 0; i < 8; ++i) {
    const std::string p = "blk." + std::to_string(i) + ".";
    mat(p + "attn_v.weight", 256, 4);
    mat(p + "ffn_down.weight", 512, 4);
    mat(p + "attn_q.weight", 256, 4);
    w.add_tensor(p + "attn_norm.weight", ggml_type::f32, {256}, f32_bytes(std::vector<float>(256, 1.0f)));
  }
  mat("odd.weight", 96, 3);   // fits 32-element blocks but not K-quant ones
  mat("odder.weight", 40, 2); // fits nothing but F16
  w.write(path);
}

}  // namespace

TEST(quantize_model, q4_k_m_mix_follows_llama_rules) {
  qf::test::temp_file in("qm_in"), out("qm_out");
  write_model(in.path(), false);
  quantize_model(in.path(), out.path(), "q4_k_m", 2);
  auto f = file::open(out.path());
  EXPECT_EQ(f->get_int("general.file_type"), 15);
  EXPECT_EQ(f->get_int("general.quantization_version"), 2);
  EXPECT_EQ(f->get_int("llama.block_count"), 8);
  EXPECT_EQ(f->get_string_array("tokenizer.ggml.tokens"), (std::vector<std::string>{"a", "b"}));
  // 8 layers: more bits for layers 0 (first eighth), 7 (last eighth), and (i - 1) % 3 == 2 -> 3, 6.
  for (int i = 0; i < 8; ++i) {
    const bool more = i == 0 || i == 3 || i == 6 || i == 7;
    const std::string p = "blk." + std::to_string(i) + ".";
    EXPECT_EQ(f->find_tensor(p + "attn_v.weight")->type, more ? ggml_type::q6_k : ggml_type::q4_k) << i;
    EXPECT_EQ(f->find_tensor(p + "ffn_down.weight")->type, more ? ggml_type::q6_k : ggml_type::q4_k) << i;
    EXPECT_EQ(f->find_tensor(p + "attn_q.weight")->type, ggml_type::q4_k);
    EXPECT_EQ(f->find_tensor(p + "attn_norm.weight")->type, ggml_type::f32);
  }
  EXPECT_EQ(f->find_tensor("output.weight")->type, ggml_type::q6_k);
  EXPECT_EQ(f->find_tensor("token_embd.weight")->type, ggml_type::q4_k);
  EXPECT_EQ(f->find_tensor("odd.weight")->type, ggml_type::q5_0);  // llama.cpp's Q4_K substitute
  EXPECT_EQ(f->find_tensor("odder.weight")->type, ggml_type::f16);

  // Decoded weights stay close to the originals.
  auto src = file::open(in.path());
  for (const char* name : {"blk.1.ffn_down.weight", "blk.0.ffn_down.weight", "odd.weight", "output.weight"}) {
    const auto* a = src->find_tensor(name);
    const auto* b = f->find_tensor(name);
    std::vector<float> orig(static_cast<size_t>(a->n_elements())), dec(orig.size());
    std::memcpy(orig.data(), src->tensor_data(*a), a->n_bytes);
    const size_t rb = b->n_bytes / static_cast<size_t>(b->n_rows());
    for (int64_t r = 0; r < b->n_rows(); ++r)
      cpu::dequantize_row(b->type, f->tensor_data(*b) + r * rb, dec.data() + r * b->ne[0], b->ne[0]);
    EXPECT_LT(qf::test::nmse(dec, orig), 1e-2) << name;
  }
}

TEST(quantize_model, tied_embeddings_and_other_recipes) {
  qf::test::temp_file in("qm_in2"), out("qm_out2");
  write_model(in.path(), true);
  quantize_model(in.path(), out.path(), "q4_0", 1);
  auto f = file::open(out.path());
  EXPECT_EQ(f->get_int("general.file_type"), 2);
  EXPECT_EQ(f->find_tensor("token_embd.weight")->type, ggml_type::q6_k);  // the classifier when tied
  EXPECT_EQ(f->find_tensor("blk.0.attn_v.weight")->type, ggml_type::q4_0);
  quantize_model(in.path(), out.path(), "q8_0", 2);
  f = file::open(out.path());
  EXPECT_EQ(f->get_int("general.file_type"), 7);
  EXPECT_EQ(f->find_tensor("token_embd.weight")->type, ggml_type::q8_0);
  EXPECT_EQ(f->find_tensor("odder.weight")->type, ggml_type::f16);
  // Already-quantized input is copied unchanged.
  qf::test::temp_file again("qm_out3");
  quantize_model(out.path(), again.path(), "q4_k", 2);
  auto g = file::open(again.path());
  EXPECT_EQ(g->get_int("general.file_type"), 14);
  EXPECT_EQ(g->find_tensor("blk.2.attn_q.weight")->type, ggml_type::q8_0);
}

TEST(quantize_model, k_quant_substitutes_for_short_rows) {
  // Rows of 896 (Qwen2.5-0.5B's n_embd): Q4_K -> Q5_0, Q6_K -> Q8_0, as llama.cpp.
  EXPECT_EQ(quantized_type_for("q4_k_m", "blk.1.attn_q.weight", ggml_type::f32, 2, 896, 1, 24, true), ggml_type::q5_0);
  EXPECT_EQ(quantized_type_for("q4_k_m", "blk.0.attn_v.weight", ggml_type::f32, 2, 896, 0, 24, true), ggml_type::q8_0);
  EXPECT_EQ(quantized_type_for("q4_k_m", "token_embd.weight", ggml_type::f32, 2, 896, -1, 24, true), ggml_type::q8_0);
  EXPECT_EQ(quantized_type_for("q4_k_m", "blk.4.ffn_down.weight", ggml_type::f32, 2, 4864, 4, 24, true),
            ggml_type::q4_k);
  EXPECT_EQ(quantized_type_for("q6_k", "blk.1.attn_q.weight", ggml_type::f32, 2, 896, 1, 24, true), ggml_type::q8_0);
  EXPECT_EQ(quantized_type_for("q4_k", "blk.1.attn_q.weight", ggml_type::f32, 2, 48, 1, 24, true), ggml_type::f16);
}

TEST(quantize_model, legacy_32_element_recipes) {
  qf::test::temp_file in("qm_in5"), out("qm_out5");
  write_model(in.path(), false);
  auto src = file::open(in.path());
  for (auto [recipe, type, ftype] : {std::tuple{"q4_1", ggml_type::q4_1, 3}, std::tuple{"q5_0", ggml_type::q5_0, 8},
                                     std::tuple{"q5_1", ggml_type::q5_1, 9}}) {
    quantize_model(in.path(), out.path(), recipe, 2);
    auto f = file::open(out.path());
    EXPECT_EQ(f->get_int("general.file_type"), ftype) << recipe;
    EXPECT_EQ(f->find_tensor("blk.3.attn_v.weight")->type, type) << recipe;
    EXPECT_EQ(f->find_tensor("odd.weight")->type, type) << recipe;
    EXPECT_EQ(f->find_tensor("output.weight")->type, ggml_type::q6_k) << recipe;
    EXPECT_EQ(f->find_tensor("odder.weight")->type, ggml_type::f16) << recipe;
    const auto* a = src->find_tensor("blk.3.ffn_down.weight");
    const auto* b = f->find_tensor("blk.3.ffn_down.weight");
    std::vector<float> orig(static_cast<size_t>(a->n_elements())), dec(orig.size());
    std::memcpy(orig.data(), src->tensor_data(*a), a->n_bytes);
    const size_t rb = b->n_bytes / static_cast<size_t>(b->n_rows());
    for (int64_t r = 0; r < b->n_rows(); ++r)
      cpu::dequantize_row(b->type, f->tensor_data(*b) + r * rb, dec.data() + r * b->ne[0], b->ne[0]);
    EXPECT_LT(qf::test::nmse(dec, orig), type == ggml_type::q4_1 ? 2e-2 : 5e-3) << recipe;
  }
}

TEST(quantize_model, bad_input_is_a_gguf_error) {
  qf::test::temp_file in("qm_in4"), out("qm_out4");
  write_model(in.path(), false);
  EXPECT_THROW(quantize_model(in.path(), out.path(), "q3_k", 1), gguf_error);
  EXPECT_THROW(quantize_model("/nonexistent.gguf", out.path(), "q8_0", 1), gguf_error);
  qf::test::temp_file junk("qm_junk");
  junk.write({1, 2, 3, 4, 5, 6, 7, 8});
  EXPECT_THROW(quantize_model(junk.path(), out.path(), "q8_0", 1), gguf_error);
}
