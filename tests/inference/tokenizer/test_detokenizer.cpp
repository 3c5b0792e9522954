// Streaming detokenization of real byte-level BPE and SentencePiece vocabularies: a
// character whose bytes are spread over several tokens is emitted once, when complete.
#include <gtest/gtest.h>

#include "tests/inference/tokenizer/vocab_files.h"
#include "text/utf8.h"

namespace qf::infer::test {
namespace {

// Pushes ids one by one; every chunk must be valid UTF-8 and the total must equal `want`.
void check_stream(const tokenizer& tok, const std::vector<int32_t>& ids, const std::string& want, bool strip,
                  size_t* split_chars) {
  detokenizer d(tok, strip);
  std::string all;
  *split_chars = 0;
  for (int32_t id : ids) {
    std::string chunk = d.push(id);
    EXPECT_TRUE(text::is_valid_utf8(chunk)) << "chunk cut inside a character";
    const std::string& p = tok.piece(id);
    if (!p.empty() && !text::is_valid_utf8(p)) ++*split_chars;
    all += chunk;
  }
  all += d.flush();
  EXPECT_EQ(all, want);
}

TEST(detokenizer, bpe_emoji_split_across_tokens) {
  if (!vocab_dir()) GTEST_SKIP() << "shared test data absent (set QUICKFILL_TEST_DATA)";
  for (const char* name : {"gpt-2", "qwen2", "starcoder"}) {
    const tokenizer* tok = load_vocab(name);
    ASSERT_NE(tok, nullptr);
    std::string text = "x = \"\xF0\x9F\xA6\x99\xE2\x80\x8D\xF0\x9F\x94\xA5 \xE4\xB8\xAD\xE6\x96\x87\" // \xC3\xA4";
    auto ids = tok->encode(text, false);
    size_t split = 0;
    check_stream(*tok, ids, text, false, &split);
    EXPECT_GT(split, 0u) << name << ": expected at least one token holding a partial character";
  }
}

TEST(detokenizer, spm_byte_tokens) {
  if (!vocab_dir()) GTEST_SKIP() << "shared test data absent (set QUICKFILL_TEST_DATA)";
  const tokenizer* tok = load_vocab("llama-spm");
  ASSERT_NE(tok, nullptr);
  std::string text = "llama \xF0\x9F\xA6\x99 and \xE1\x80\x80 end";
  auto ids = tok->encode(text, false);
  size_t split = 0;
  check_stream(*tok, ids, text, true, &split);
  EXPECT_GE(split, 4u);  // the llama emoji is four <0xNN> byte tokens
}

TEST(detokenizer, flush_releases_an_unfinished_character) {
  if (!vocab_dir()) GTEST_SKIP() << "shared test data absent (set QUICKFILL_TEST_DATA)";
  const tokenizer* tok = load_vocab("llama-spm");
  ASSERT_NE(tok, nullptr);
  int32_t f0 = tok->find("<0xF0>");
  ASSERT_GE(f0, 0);
  detokenizer d(*tok);
  EXPECT_EQ(d.push(f0), "");
  EXPECT_EQ(d.flush(), "\xF0");
}

}  // namespace
}  // namespace qf::infer::test
