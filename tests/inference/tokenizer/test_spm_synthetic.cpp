// SentencePiece path on a vocabulary written by the test itself (GGUF writer -> reader
// -> tokenizer), so byte fallback, scores, the dummy prefix and special tokens are
// covered without shared data.
#include <gtest/gtest.h>

#include <filesystem>
#include <unistd.h>

#include "inference/gguf/gguf.h"
#include "inference/tokenizer/tokenizer.h"

namespace qf::infer {
namespace {

constexpr const char* k_sp = "\xE2\x96\x81";  // ▁

struct tiny_spm {
  std::vector<std::string> tokens;
  std::vector<float> scores;
  std::vector<int32_t> types;
  int32_t add(std::string t, float score, int32_t type = 1) {
    tokens.push_back(std::move(t));
    scores.push_back(score);
    types.push_back(type);
    return static_cast<int32_t>(tokens.size() - 1);
  }
};

class spm_synthetic : public ::testing::Test {
 protected:
  void SetUp() override {
    tiny_spm v;
    v.add("<unk>", 0, 2);
    v.add("<s>", 0, 3);
    v.add("</s>", 0, 3);
    for (int b = 0; b < 256; ++b) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "<0x%02X>", b);
      v.add(buf, 0, 6);
    }
    sp_ = v.add(k_sp, -1);
    a_ = v.add("a", -2);
    b_ = v.add("b", -2);
    ab_ = v.add("ab", -3);
    sp_a_ = v.add(std::string(k_sp) + "a", -4);
    sp_ab_ = v.add(std::string(k_sp) + "ab", -1.5f);
    bb_ = v.add("bb", -0.5f);
    fim_pre_ = v.add(std::string(k_sp) + "<PRE>", 0, 3);
    fim_suf_ = v.add(std::string(k_sp) + "<SUF>", 0, 3);
    fim_mid_ = v.add(std::string(k_sp) + "<MID>", 0, 3);
    eot_ = v.add(std::string(k_sp) + "<EOT>", 0, 3);
    user_ = v.add("<tag>", 0, 4);

    gguf::writer w;
    w.add_string("general.architecture", "llama");
    w.add_string("tokenizer.ggml.model", "llama");
    w.add_string_array("tokenizer.ggml.tokens", v.tokens);
    w.add_f32_array("tokenizer.ggml.scores", v.scores);
    w.add_i32_array("tokenizer.ggml.token_type", v.types);
    w.add_u32("tokenizer.ggml.bos_token_id", 1);
    w.add_u32("tokenizer.ggml.eos_token_id", 2);
    w.add_bool("tokenizer.ggml.add_bos_token", true);
    path_ = (std::filesystem::temp_directory_path() / ("qf_tiny_spm_" + std::to_string(::getpid()) + ".gguf"))
                .string();
    w.write(path_);
    auto f = gguf::file::open(path_);
    tok_ = tokenizer::from_gguf(*f);
  }
  void TearDown() override { std::filesystem::remove(path_); }

  std::string path_;
  std::unique_ptr<tokenizer> tok_;
  int32_t sp_{}, a_{}, b_{}, ab_{}, sp_a_{}, sp_ab_{}, bb_{}, fim_pre_{}, fim_suf_{}, fim_mid_{}, eot_{}, user_{};
};

int32_t byte_id(uint8_t b) { return 3 + b; }

TEST_F(spm_synthetic, metadata) {
  EXPECT_EQ(tok_->model_kind(), "llama");
  EXPECT_EQ(tok_->n_vocab(), 3 + 256 + 12);
  EXPECT_EQ(tok_->special().bos, 1);
  EXPECT_EQ(tok_->special().eos, 2);
  EXPECT_TRUE(tok_->add_bos_default());
  EXPECT_TRUE(tok_->add_space_prefix());
  // CodeLlama-style FIM spellings found without metadata keys.
  EXPECT_EQ(tok_->special().fim_pre, fim_pre_);
  EXPECT_EQ(tok_->special().fim_suf, fim_suf_);
  EXPECT_EQ(tok_->special().fim_mid, fim_mid_);
  EXPECT_EQ(tok_->special().eot, eot_);
  EXPECT_TRUE(tok_->is_eog(2));
  EXPECT_TRUE(tok_->is_eog(eot_));
  EXPECT_FALSE(tok_->is_eog(a_));
}

TEST_F(spm_synthetic, score_order_and_dummy_prefix) {
  // "ab" -> "▁ab": candidates ▁a (-4), ab (-3): ab wins first, then ▁+ab = ▁ab (-1.5).
  EXPECT_EQ(tok_->encode("ab", false), (std::vector<int32_t>{sp_ab_}));
  EXPECT_EQ(tok_->encode("ab", true), (std::vector<int32_t>{1, sp_ab_}));
  // "abb": bb (-0.5) beats ab (-3): ▁ a bb -> ▁a (-4) then ▁a+bb is no token.
  EXPECT_EQ(tok_->encode("abb", false), (std::vector<int32_t>{sp_a_, bb_}));
  EXPECT_EQ(tok_->encode("a b", false), (std::vector<int32_t>{sp_a_, sp_, b_}));
  EXPECT_TRUE(tok_->encode("", false).empty());
  EXPECT_EQ(tok_->encode("", true), (std::vector<int32_t>{1}));
}

TEST_F(spm_synthetic, continuation_has_no_dummy_prefix) {
  EXPECT_EQ(tok_->encode_continuation("ab"), (std::vector<int32_t>{ab_}));
  EXPECT_EQ(tok_->encode_continuation(" ab"), (std::vector<int32_t>{sp_ab_}));
  EXPECT_EQ(tok_->decode(tok_->encode_continuation("b ab")), "b ab");
  // After a special token the dummy space comes back, as in encode().
  EXPECT_EQ(tok_->encode_continuation("b<tag>ab"), (std::vector<int32_t>{b_, user_, sp_ab_}));
}

TEST_F(spm_synthetic, byte_fallback_for_unknown_characters) {
  // é = C3 A9 and 🦙 = F0 9F A6 99 are not tokens: emitted as <0xNN>.
  auto ids = tok_->encode("a\xC3\xA9", false);
  EXPECT_EQ(ids, (std::vector<int32_t>{sp_a_, byte_id(0xC3), byte_id(0xA9)}));
  EXPECT_EQ(tok_->decode(ids, true), "a\xC3\xA9");
  auto ids2 = tok_->encode("\xF0\x9F\xA6\x99", false);
  EXPECT_EQ(ids2, (std::vector<int32_t>{sp_, byte_id(0xF0), byte_id(0x9F), byte_id(0xA6), byte_id(0x99)}));
  EXPECT_EQ(tok_->piece(byte_id(0xF0)), "\xF0");
  EXPECT_EQ(tok_->piece(sp_ab_), " ab");
}

TEST_F(spm_synthetic, streaming_holds_back_partial_characters) {
  auto ids = tok_->encode("\xF0\x9F\xA6\x99" "ab", false);
  detokenizer d(*tok_, true);
  std::vector<std::string> outs;
  for (int32_t id : ids) outs.push_back(d.push(id));
  // ▁ (stripped), F0, 9F, A6 give nothing; 99 completes the llama; then "ab".
  ASSERT_EQ(outs.size(), 6u);
  EXPECT_EQ(outs[0], "");
  EXPECT_EQ(outs[1], "");
  EXPECT_EQ(outs[2], "");
  EXPECT_EQ(outs[3], "");
  EXPECT_EQ(outs[4], "\xF0\x9F\xA6\x99");
  EXPECT_EQ(outs[5], "ab");
  EXPECT_EQ(d.flush(), "");
}

TEST_F(spm_synthetic, special_tokens_and_space_prefix_after_them) {
  std::string text = std::string(k_sp) + "<PRE>ab";
  // Without parse_special the control spelling is plain text (bytes / pieces).
  auto plain = tok_->encode(text, false, false);
  EXPECT_EQ(std::count(plain.begin(), plain.end(), fim_pre_), 0);
  EXPECT_FALSE(plain.empty());
  // With it, the token is recognised and the text after it gets a dummy space again.
  auto parsed = tok_->encode(text, false, true);
  EXPECT_EQ(parsed, (std::vector<int32_t>{fim_pre_, sp_ab_}));
  // User-defined tokens are always split out.
  auto user = tok_->encode("a<tag>b", false, false);
  EXPECT_EQ(user, (std::vector<int32_t>{sp_a_, user_, sp_, b_}));
  EXPECT_TRUE(tok_->is_control(fim_pre_));
  EXPECT_FALSE(tok_->is_control(user_));
  detokenizer d(*tok_);
  EXPECT_EQ(d.push(fim_pre_), "");
}

}  // namespace
}  // namespace qf::infer

namespace qf::infer {
namespace {

TEST(spm_without_token_types, conventional_spellings_are_recognised) {
  vocab_data v;
  v.model = "llama";
  v.tokens = {"<unk>", "<s>", "</s>"};
  for (int b = 0; b < 256; ++b) {
    char buf[8];
    std::snprintf(buf, sizeof buf, "<0x%02X>", b);
    v.tokens.push_back(buf);
  }
  v.tokens.push_back("\xE2\x96\x81" "a");
  v.scores.assign(v.tokens.size(), 0.0f);
  auto tok = tokenizer::from_vocab(v);
  EXPECT_TRUE(tok->is_control(1));
  EXPECT_EQ(tok->type(0), token_type::unknown);
  EXPECT_EQ(tok->type(3 + 0xC3), token_type::byte);
  EXPECT_EQ(tok->special().bos, 1);
  EXPECT_EQ(tok->special().eos, 2);
  auto ids = tok->encode("a\xC3\xA9", true);
  EXPECT_EQ(ids, (std::vector<int32_t>{1, 259, 3 + 0xC3, 3 + 0xA9}));
  EXPECT_EQ(tok->decode(ids, true), "a\xC3\xA9");
}

}  // namespace
}  // namespace qf::infer
