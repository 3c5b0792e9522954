// Special tokens of real vocabularies: ids from metadata and from family spellings
// (FIM prefix/suffix/middle/pad, repo and file separators, EOT/EOG), and parse_special
// turning spellings into tokens only when asked.
#include <gtest/gtest.h>

#include <algorithm>

#include "tests/inference/tokenizer/vocab_files.h"

namespace qf::infer::test {
namespace {

#define REQUIRE_VOCAB(var, name)                                                        \
  if (!vocab_dir()) GTEST_SKIP() << "shared test data absent (set QUICKFILL_TEST_DATA)"; \
  const tokenizer* var = load_vocab(name);                                              \
  ASSERT_NE(var, nullptr) << name

TEST(special_tokens, starcoder_fim_ids_from_spellings) {
  REQUIRE_VOCAB(tok, "starcoder");
  const auto& s = tok->special();
  EXPECT_EQ(s.fim_pre, 1);
  EXPECT_EQ(s.fim_mid, 2);
  EXPECT_EQ(s.fim_suf, 3);
  EXPECT_EQ(s.fim_pad, 4);
  EXPECT_EQ(s.fim_rep, 5);
  EXPECT_EQ(s.fim_sep, 6);
  EXPECT_EQ(s.bos, 0);
  EXPECT_EQ(s.eos, 0);
  EXPECT_EQ(s.eot, 0);  // <|endoftext|>
  EXPECT_TRUE(tok->is_eog(0));
  EXPECT_TRUE(tok->is_eog(6));  // a file separator ends a completion
  EXPECT_FALSE(tok->is_eog(1));
  EXPECT_TRUE(tok->is_control(1));
  EXPECT_EQ(tok->model_kind(), "gpt2");
  EXPECT_EQ(tok->pre_kind(), "starcoder");
  EXPECT_FALSE(tok->add_bos_default());
}

TEST(special_tokens, deepseek_coder_fim_ids_from_spellings) {
  REQUIRE_VOCAB(tok, "deepseek-coder");
  const auto& s = tok->special();
  EXPECT_EQ(s.fim_pre, 32016);  // <｜fim▁begin｜>
  EXPECT_EQ(s.fim_suf, 32015);  // <｜fim▁hole｜>
  EXPECT_EQ(s.fim_mid, 32017);  // <｜fim▁end｜>
  EXPECT_EQ(s.bos, 32013);
  EXPECT_EQ(s.eos, 32014);
  EXPECT_TRUE(tok->add_bos_default());
  EXPECT_TRUE(tok->is_eog(32014));
}

TEST(special_tokens, qwen2_eos_and_eog) {
  REQUIRE_VOCAB(tok, "qwen2");
  const auto& s = tok->special();
  EXPECT_EQ(s.eos, 151643);
  EXPECT_EQ(s.pad, 151643);
  EXPECT_EQ(s.eot, 151645);  // <|im_end|>
  EXPECT_TRUE(tok->is_eog(151643));
  EXPECT_TRUE(tok->is_eog(151645));
  EXPECT_FALSE(tok->is_eog(151644));  // <|im_start|>
  // The base Qwen2 vocabulary has no FIM tokens (Qwen2.5-Coder files name them in metadata).
  EXPECT_EQ(s.fim_pre, -1);
}

TEST(special_tokens, llama_bpe_defaults) {
  REQUIRE_VOCAB(tok, "llama-bpe");
  EXPECT_TRUE(tok->add_bos_default());
  EXPECT_EQ(tok->special().bos, 128000);
  EXPECT_EQ(tok->special().eot, 128009);  // <|eot_id|>
  EXPECT_EQ(tok->encode("Hi", true).front(), 128000);
}

TEST(special_tokens, parse_special_switch) {
  REQUIRE_VOCAB(tok, "qwen2");
  const std::string text = "a<|endoftext|>b<|im_start|>";
  auto parsed = tok->encode(text, false, true);
  ASSERT_EQ(parsed.size(), 4u);
  EXPECT_EQ(parsed[1], 151643);
  EXPECT_EQ(parsed[3], 151644);
  auto plain = tok->encode(text, false, false);
  EXPECT_EQ(std::count(plain.begin(), plain.end(), 151643), 0);
  EXPECT_EQ(std::count(plain.begin(), plain.end(), 151644), 0);
  EXPECT_GT(plain.size(), 4u);
  EXPECT_EQ(tok->decode(plain), text);
  // Control tokens print nothing when decoding.
  EXPECT_EQ(tok->decode(parsed), "ab");
  EXPECT_EQ(tok->piece(151643), "<|endoftext|>");
}

TEST(special_tokens, user_defined_tokens_are_always_split) {
  REQUIRE_VOCAB(tok, "qwen2");
  // [PAD151700] is a user-defined token of this vocabulary.
  int32_t id = tok->find("[PAD151700]");
  ASSERT_EQ(id, 151700);
  auto ids = tok->encode("x[PAD151700]y", false, false);
  EXPECT_EQ(std::count(ids.begin(), ids.end(), id), 1);
}

TEST(special_tokens, gpt2_endoftext_spelling) {
  REQUIRE_VOCAB(tok, "gpt-2");
  EXPECT_EQ(tok->encode("<|endoftext|>", false, true), (std::vector<int32_t>{50256}));
  auto plain = tok->encode("<|endoftext|>", false, false);
  EXPECT_GT(plain.size(), 1u);
  EXPECT_EQ(tok->decode(plain), "<|endoftext|>");
}

}  // namespace
}  // namespace qf::infer::test
