// Deterministic random inputs through every real vocabulary: well-formed text of mixed
// scripts, spaces and code punctuation must decode back to itself; arbitrary bytes must
// not crash and decode to the input with invalid bytes replaced by U+FFFD.
#include <gtest/gtest.h>

#include <random>

#include "text/utf8.h"
#include "tests/inference/tokenizer/vocab_files.h"

namespace qf::infer::test {
namespace {

const uint32_t k_alphabet[] = {'a', 'b', 'Z', '0', '7', ' ', ' ', ' ', '\n', '\t', '\r', '(', ')', '{', '}', ';',
                               '<', '>', '|', '\'', '"', '_', '.', '=', 0xA0, 0xE9, 0x301, 0x4E2D, 0xAC00, 0x3000,
                               0x1F999, 0x200D, 0x416, 0x5D0, 0x915, 0x93F, 0xFF11, 0x2019, 0xBD};

class roundtrip_fuzz : public ::testing::TestWithParam<std::string> {};

TEST_P(roundtrip_fuzz, random_text_roundtrips) {
  if (!vocab_dir()) GTEST_SKIP() << "shared test data absent (set QUICKFILL_TEST_DATA to ../shared/data)";
  const tokenizer* tok = load_vocab(GetParam());
  ASSERT_NE(tok, nullptr);
  const bool spm = tok->model_kind() == "llama";
  std::mt19937 rng(12345);
  for (int i = 0; i < 300; ++i) {
    std::string s;
    int n = 1 + static_cast<int>(rng() % 40);
    for (int k = 0; k < n; ++k)
      text::append_utf8(s, k_alphabet[rng() % (sizeof k_alphabet / sizeof k_alphabet[0])]);
    auto ids = tok->encode(s, false);
    for (int32_t id : ids) ASSERT_TRUE(id >= 0 && id < tok->n_vocab());
    ASSERT_EQ(tok->decode(ids, spm), s) << GetParam() << " case " << i;
  }
}

TEST_P(roundtrip_fuzz, random_bytes_do_not_break_anything) {
  if (!vocab_dir()) GTEST_SKIP() << "shared test data absent (set QUICKFILL_TEST_DATA to ../shared/data)";
  const tokenizer* tok = load_vocab(GetParam());
  ASSERT_NE(tok, nullptr);
  const bool spm = tok->model_kind() == "llama";
  std::mt19937 rng(777);
  for (int i = 0; i < 200; ++i) {
    std::string s;
    int n = 1 + static_cast<int>(rng() % 64);
    for (int k = 0; k < n; ++k) s.push_back(static_cast<char>(rng() & 0xFF));
    auto ids = tok->encode(s, rng() % 2 == 0, rng() % 2 == 0);
    for (int32_t id : ids) ASSERT_TRUE(id >= 0 && id < tok->n_vocab());
    // SentencePiece keeps raw bytes (byte fallback); byte-level BPE sees U+FFFD.
    std::string want = spm ? s : text::repair_utf8(s);
    std::string got = tok->decode(ids, spm);
    if (spm) {
      // An invalid lead byte can swallow the first bytes of an escaped space (U+2581)
      // into its symbol, so the space comes back as the raw bytes of U+2581, exactly as
      // with llama.cpp's SentencePiece tokenizer. Compare modulo that.
      // (Built by appending: GCC 12 warns, falsely, about std::string::replace here.)
      auto unescape = [](const std::string& t) {
        std::string out;
        for (size_t i = 0; i < t.size();) {
          if (t.compare(i, 3, "\xE2\x96\x81") == 0) {
            out += ' ';
            i += 3;
          } else {
            out += t[i++];
          }
        }
        return out;
      };
      got = unescape(got);
      want = unescape(want);
    }
    // '<' or '[' may start a special spelling: compare only inputs free of both.
    // (Byte-level BPE sees the strict repair of the input, so the bytes that never
    // occur in UTF-8 (C0, C1, F5..FF) reach it only as U+FFFD: nothing to exclude.)
    const bool odd = s.find('<') != std::string::npos || s.find('[') != std::string::npos;
    if (!odd) {
      EXPECT_EQ(got, want) << GetParam() << " case " << i;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(all, roundtrip_fuzz,
                         ::testing::Values("gpt-2", "llama-bpe", "llama-spm", "qwen2", "qwen35", "deepseek-coder",
                                           "refact", "starcoder"),
                         [](const auto& info) { return vocab_test_name(info.param); });

}  // namespace
}  // namespace qf::infer::test
