// FIM format detection per family, from GGUF ids and from token texts.
#include <gtest/gtest.h>

#include <algorithm>

#include "server/completion/prompt/fim_format.h"
#include "tests/server/completion/fake_lm.h"

using namespace qf::server::completion;
using qf::test::fake_vocab;

namespace {

bool stops_at(const fim_format& f, int32_t id) {
  return std::find(f.stop_ids.begin(), f.stop_ids.end(), id) != f.stop_ids.end();
}

// A vocabulary with no FIM ids in its metadata, only token texts.
fake_vocab text_only_vocab(const std::vector<std::pair<int32_t, std::string>>& texts) {
  fake_vocab v;
  lm_specials& sp = v.mutable_specials();
  sp = lm_specials{};
  sp.eos = fake_vocab::k_eos;
  for (int32_t id = 300; id < fake_vocab::k_n_vocab; ++id) v.set_special(id, "<unused" + std::to_string(id) + ">");
  for (const auto& [id, t] : texts) v.set_special(id, t);
  return v;
}

}  // namespace

TEST(fim_format, gguf_ids_win) {
  fake_vocab v;
  fim_format f = detect_fim_format(v);
  EXPECT_TRUE(f.has_fim);
  EXPECT_EQ(f.family, "gguf");
  EXPECT_EQ(f.order, fim_order::psm);
  EXPECT_EQ(f.pre, fake_vocab::k_pre);
  EXPECT_EQ(f.suf, fake_vocab::k_suf);
  EXPECT_EQ(f.mid, fake_vocab::k_mid);
  EXPECT_TRUE(f.repo_level());
  EXPECT_EQ(f.bos, fake_vocab::k_bos);
  for (int32_t id : {fake_vocab::k_eos, fake_vocab::k_pad, fake_vocab::k_pre, fake_vocab::k_suf, fake_vocab::k_mid,
                     fake_vocab::k_rep, fake_vocab::k_sep})
    EXPECT_TRUE(stops_at(f, id)) << id;
}

TEST(fim_format, qwen_fallback_by_text) {
  fake_vocab v = text_only_vocab({{300, "<|fim_prefix|>"}, {301, "<|fim_suffix|>"}, {302, "<|fim_middle|>"},
                                  {304, "<|fim_pad|>"}, {305, "<|repo_name|>"}, {306, "<|file_sep|>"},
                                  {307, "<|endoftext|>"}});
  v.set_add_bos(false);
  fim_format f = detect_fim_format(v);
  EXPECT_EQ(f.family, "qwen2.5-coder");
  EXPECT_EQ(f.pre, 300);
  EXPECT_EQ(f.suf, 301);
  EXPECT_EQ(f.mid, 302);
  EXPECT_EQ(f.pad, 304);
  EXPECT_EQ(f.repo, 305);
  EXPECT_EQ(f.file_sep, 306);
  EXPECT_EQ(f.bos, -1);
  EXPECT_TRUE(stops_at(f, 307));  // <|endoftext|> found by text
}

TEST(fim_format, starcoder2_fallback_by_text) {
  fake_vocab v = text_only_vocab({{300, "<fim_prefix>"}, {301, "<fim_suffix>"}, {302, "<fim_middle>"},
                                  {304, "<fim_pad>"}, {305, "<repo_name>"}, {306, "<file_sep>"}});
  fim_format f = detect_fim_format(v);
  EXPECT_EQ(f.family, "starcoder2");
  EXPECT_TRUE(f.repo_level());
  EXPECT_EQ(f.order, fim_order::psm);
}

TEST(fim_format, starcoder2_ids_and_stops) {
  fake_vocab v = text_only_vocab({{300, "<fim_prefix>"}, {301, "<fim_suffix>"}, {302, "<fim_middle>"},
                                  {304, "<fim_pad>"}, {305, "<repo_name>"}, {306, "<file_sep>"},
                                  {307, "<|endoftext|>"}});
  fim_format f = detect_fim_format(v);
  EXPECT_EQ(f.pre, 300);
  EXPECT_EQ(f.suf, 301);
  EXPECT_EQ(f.mid, 302);
  EXPECT_EQ(f.repo, 305);
  EXPECT_EQ(f.file_sep, 306);
  for (int32_t id : {304, 305, 306, 307}) EXPECT_TRUE(stops_at(f, id)) << id;
}

// CodeGemma: Qwen's FIM texts, no repo marker, <|file_separator|> between
// files; a completion ends at <|file_separator|>.
TEST(fim_format, codegemma_fallback_by_text) {
  fake_vocab v = text_only_vocab({{300, "<|fim_prefix|>"}, {301, "<|fim_suffix|>"}, {302, "<|fim_middle|>"},
                                  {308, "<|file_separator|>"}});
  fim_format f = detect_fim_format(v);
  EXPECT_EQ(f.family, "codegemma");
  EXPECT_TRUE(f.has_fim);
  EXPECT_EQ(f.order, fim_order::psm);
  EXPECT_EQ(f.pre, 300);
  EXPECT_EQ(f.suf, 301);
  EXPECT_EQ(f.mid, 302);
  EXPECT_FALSE(f.repo_level());  // no repo marker: files are not laid out as a repository
  EXPECT_TRUE(stops_at(f, 308));
  EXPECT_TRUE(stops_at(f, fake_vocab::k_eos));
}

// The same three texts without <|file_separator|> are Qwen's, not CodeGemma's.
TEST(fim_format, qwen_texts_without_file_separator_are_not_codegemma) {
  fake_vocab v = text_only_vocab({{300, "<|fim_prefix|>"}, {301, "<|fim_suffix|>"}, {302, "<|fim_middle|>"}});
  EXPECT_EQ(detect_fim_format(v).family, "qwen2.5-coder");
}

// Qwen3's vocabulary carries Qwen2.5-Coder's FIM and repository tokens.
TEST(fim_format, qwen3_vocabulary_uses_the_qwen_tokens) {
  fake_vocab v = text_only_vocab({{300, "<|fim_prefix|>"}, {301, "<|fim_middle|>"}, {302, "<|fim_suffix|>"},
                                  {304, "<|fim_pad|>"}, {305, "<|repo_name|>"}, {306, "<|file_sep|>"},
                                  {308, "<|im_end|>"}, {307, "<|endoftext|>"}});
  fim_format f = detect_fim_format(v);
  EXPECT_EQ(f.family, "qwen2.5-coder");
  EXPECT_EQ(f.pre, 300);
  EXPECT_EQ(f.mid, 301);
  EXPECT_EQ(f.suf, 302);
  EXPECT_TRUE(f.repo_level());
  EXPECT_TRUE(stops_at(f, 307));
}

TEST(fim_format, deepseek_fallback_by_text) {
  fake_vocab v = text_only_vocab({{300, "<\xEF\xBD\x9C" "fim\xE2\x96\x81" "begin\xEF\xBD\x9C>"},
                                  {301, "<\xEF\xBD\x9C" "fim\xE2\x96\x81" "hole\xEF\xBD\x9C>"},
                                  {302, "<\xEF\xBD\x9C" "fim\xE2\x96\x81" "end\xEF\xBD\x9C>"},
                                  {306, "<|EOT|>"}});
  fim_format f = detect_fim_format(v);
  EXPECT_EQ(f.family, "deepseek-coder");
  EXPECT_EQ(f.pre, 300);
  EXPECT_EQ(f.suf, 301);
  EXPECT_EQ(f.mid, 302);
  EXPECT_FALSE(f.repo_level());
  EXPECT_TRUE(stops_at(f, 306));
}

TEST(fim_format, codellama_fallback_by_text) {
  fake_vocab v = text_only_vocab({{300, "\xE2\x96\x81<PRE>"}, {301, "\xE2\x96\x81<SUF>"}, {302, "\xE2\x96\x81<MID>"},
                                  {303, "\xE2\x96\x81<EOT>"}});
  fim_format f = detect_fim_format(v);
  EXPECT_EQ(f.family, "codellama");
  EXPECT_EQ(f.mid, 302);
  EXPECT_TRUE(stops_at(f, 303));
  fim_format spm = detect_fim_format(v, /*prefer_spm=*/true);
  EXPECT_EQ(spm.order, fim_order::spm);
}

TEST(fim_format, no_fim_tokens_means_prefix_only) {
  fake_vocab v = text_only_vocab({});
  fim_format f = detect_fim_format(v);
  EXPECT_FALSE(f.has_fim);
  EXPECT_EQ(f.family, "none");
  EXPECT_FALSE(f.repo_level());
  EXPECT_TRUE(stops_at(f, fake_vocab::k_eos));
}
