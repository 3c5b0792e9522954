// Golden vectors: every string of the ggml-vocab-*.gguf.inp files (eight vocabularies) must encode
// (no BOS, special tokens not parsed, as llama.cpp's test-tokenizer-0 does) to exactly
// the ids of the matching .out line, and decode back to the same bytes.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <sstream>

#include "tests/inference/tokenizer/vocab_files.h"

namespace qf::infer::test {
namespace {

std::string show_ids(const std::vector<int32_t>& v) {
  std::ostringstream s;
  for (int32_t id : v) s << ' ' << id;
  return s.str();
}

class vocab_vectors : public ::testing::TestWithParam<std::string> {};

TEST_P(vocab_vectors, encode_matches_reference_ids) {
  auto dir = vocab_dir();
  if (!dir) GTEST_SKIP() << "shared test data absent (set QUICKFILL_TEST_DATA to ../shared/data)";
  const tokenizer* tok = load_vocab(GetParam());
  ASSERT_NE(tok, nullptr) << "ggml-vocab-" << GetParam() << ".gguf missing";
  auto cases = read_vectors(*dir, GetParam());
  ASSERT_GE(cases.size(), 40u);
  size_t failures = 0;
  for (size_t i = 0; i < cases.size(); ++i) {
    auto got = tok->encode(cases[i].text, false, false);
    if (got != cases[i].ids) {
      ++failures;
      ADD_FAILURE() << GetParam() << " case " << i << " text [" << cases[i].text << "]\n  expected:"
                    << show_ids(cases[i].ids) << "\n  got:     " << show_ids(got);
    }
  }
  EXPECT_EQ(failures, 0u);
}

TEST_P(vocab_vectors, decode_roundtrips_every_string) {
  auto dir = vocab_dir();
  if (!dir) GTEST_SKIP() << "shared test data absent (set QUICKFILL_TEST_DATA to ../shared/data)";
  const tokenizer* tok = load_vocab(GetParam());
  ASSERT_NE(tok, nullptr);
  const bool spm = tok->model_kind() == "llama";
  for (const auto& c : read_vectors(*dir, GetParam())) {
    auto ids = tok->encode(c.text, false, false);
    EXPECT_EQ(tok->decode(ids, spm), c.text) << GetParam();
    // The reference ids decode to the same text too.
    EXPECT_EQ(tok->decode(c.ids, spm), c.text) << GetParam();
    // Streaming gives the same bytes as the one-shot decode.
    detokenizer d(*tok, spm);
    std::string streamed;
    for (int32_t id : ids) streamed += d.push(id);
    streamed += d.flush();
    EXPECT_EQ(streamed, c.text) << GetParam();
  }
}

const std::vector<std::string> k_vocabs = {"gpt-2",          "llama-bpe", "llama-spm", "qwen2",
                                           "qwen35",         "deepseek-coder", "refact",    "starcoder"};

// A vector file added to the shared data must not be silently left out of the suite.
TEST(vocab_vectors_files, every_input_file_is_covered) {
  auto dir = vocab_dir();
  if (!dir) GTEST_SKIP() << "shared test data absent (set QUICKFILL_TEST_DATA to ../shared/data)";
  size_t n = 0;
  for (const auto& e : std::filesystem::directory_iterator(*dir)) {
    std::string f = e.path().filename().string();
    const std::string pre = "ggml-vocab-", suf = ".gguf.inp";
    if (f.size() <= pre.size() + suf.size() || f.compare(f.size() - suf.size(), suf.size(), suf) != 0) continue;
    std::string name = f.substr(pre.size(), f.size() - pre.size() - suf.size());
    EXPECT_NE(std::find(k_vocabs.begin(), k_vocabs.end(), name), k_vocabs.end()) << f << " has no test";
    ++n;
  }
  EXPECT_GE(n, k_vocabs.size());
}

INSTANTIATE_TEST_SUITE_P(all, vocab_vectors, ::testing::ValuesIn(k_vocabs),
                         [](const auto& info) { return vocab_test_name(info.param); });

}  // namespace
}  // namespace qf::infer::test
