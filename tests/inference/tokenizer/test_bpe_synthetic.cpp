// Byte-level BPE on a small vocabulary built in the test (no shared data): merge order
// by rank, invalid UTF-8 input, concurrent use, and loader errors.
#include <gtest/gtest.h>

#include <thread>

#include "inference/gguf/gguf.h"
#include "inference/tokenizer/tokenizer.h"
#include "inference/tokenizer/unicode.h"

namespace qf::infer {
namespace {

// 256 byte tokens (in GPT-2's printable alphabet) plus the merged tokens of `merges`.
vocab_data tiny_bpe(const std::vector<std::string>& merges) {
  vocab_data v;
  v.model = "gpt2";
  v.pre = "qwen2";
  for (int b = 0; b < 256; ++b) v.tokens.push_back(unicode::byte_to_utf8(static_cast<uint8_t>(b)));
  for (const auto& m : merges) {
    auto sp = m.find(' ');
    v.tokens.push_back(m.substr(0, sp) + m.substr(sp + 1));
  }
  v.merges = merges;
  v.tokens.push_back("<|endoftext|>");
  v.types.assign(v.tokens.size(), 1);
  v.types.back() = 3;
  v.special.eos = static_cast<int32_t>(v.tokens.size() - 1);
  return v;
}

int32_t id_of(const tokenizer& t, const std::string& s) { return t.find(s); }

TEST(bpe_synthetic, merges_apply_lowest_rank_first) {
  // "b c" outranks "a b": "abc" -> a + bc, never ab + c.
  auto tok = tokenizer::from_vocab(tiny_bpe({"b c", "a b", "h e", "l l", "he ll", "hell o"}));
  EXPECT_EQ(tok->encode("abc", false), (std::vector<int32_t>{id_of(*tok, "a"), id_of(*tok, "bc")}));
  EXPECT_EQ(tok->encode("ab", false), (std::vector<int32_t>{id_of(*tok, "ab")}));
  EXPECT_EQ(tok->encode("hello", false), (std::vector<int32_t>{id_of(*tok, "hello")}));
  EXPECT_EQ(tok->encode_continuation("hello"), tok->encode("hello", false));
  // Word boundaries stop merges: "hel lo" never becomes "hello".
  auto ids = tok->encode("hel lo", false);
  EXPECT_EQ(std::count(ids.begin(), ids.end(), id_of(*tok, "hello")), 0);
  EXPECT_EQ(tok->decode(ids), "hel lo");
}

TEST(bpe_synthetic, long_words_take_the_heap_path_with_the_same_result) {
  auto tok = tokenizer::from_vocab(tiny_bpe({"a a", "aa aa", "aaaa aaaa"}));
  // 100 'a's: 12 x "aaaaaaaa" + "aaaa" (leftmost pairs merge first).
  auto ids = tok->encode(std::string(100, 'a'), false);
  int32_t a8 = id_of(*tok, "aaaaaaaa"), a4 = id_of(*tok, "aaaa");
  std::vector<int32_t> want(12, a8);
  want.push_back(a4);
  EXPECT_EQ(ids, want);
  // 7 'a's (scan path): aa aa aa a -> aaaa aa a.
  EXPECT_EQ(tok->encode(std::string(7, 'a'), false),
            (std::vector<int32_t>{a4, id_of(*tok, "aa"), id_of(*tok, "a")}));
}

TEST(bpe_synthetic, invalid_utf8_becomes_replacement_character) {
  auto tok = tokenizer::from_vocab(tiny_bpe({"a b"}));
  auto ids = tok->encode("a\xFF" "b", false);
  EXPECT_EQ(tok->decode(ids), "a\xEF\xBF\xBD" "b");
}

TEST(bpe_synthetic, concurrent_encode_gives_identical_results) {
  auto tok = tokenizer::from_vocab(tiny_bpe({"h e", "l l", "he ll", "hell o", "Ġ w", "o r"}));
  std::string text;
  for (int i = 0; i < 200; ++i) text += "hello world " + std::to_string(i) + "\n";
  auto want = tok->encode(text, false);
  std::vector<std::vector<int32_t>> got(4);
  std::vector<std::thread> th;
  for (int t = 0; t < 4; ++t)
    th.emplace_back([&, t] {
      for (int r = 0; r < 20; ++r) got[t] = tok->encode(text, false);
    });
  for (auto& x : th) x.join();
  for (auto& g : got) EXPECT_EQ(g, want);
  EXPECT_EQ(tok->decode(want), text);
}

TEST(bpe_synthetic, special_tokens_and_flags) {
  auto tok = tokenizer::from_vocab(tiny_bpe({"a b"}));
  int32_t eot = tok->n_vocab() - 1;
  EXPECT_EQ(tok->special().eos, eot);
  EXPECT_EQ(tok->special().eot, eot);  // found by spelling
  EXPECT_TRUE(tok->is_eog(eot));
  EXPECT_FALSE(tok->add_bos_default());
  EXPECT_EQ(tok->encode("x<|endoftext|>", false, true).back(), eot);
  EXPECT_NE(tok->encode("x<|endoftext|>", false, false).back(), eot);
  EXPECT_EQ(tok->piece(-1), "");
  EXPECT_EQ(tok->piece(tok->n_vocab()), "");
  EXPECT_TRUE(tok->is_control(eot));
}

TEST(bpe_synthetic, qwen25_coder_fim_spellings) {
  auto v = tiny_bpe({"a b"});
  const std::vector<std::string> names = {"<|fim_prefix|>", "<|fim_middle|>", "<|fim_suffix|>", "<|fim_pad|>",
                                          "<|repo_name|>",  "<|file_sep|>",   "<|im_end|>"};
  std::vector<int32_t> ids;
  for (const auto& n : names) {
    ids.push_back(static_cast<int32_t>(v.tokens.size()));
    v.tokens.push_back(n);
    v.types.push_back(3);
  }
  auto tok = tokenizer::from_vocab(v);
  const auto& s = tok->special();
  EXPECT_EQ(s.fim_pre, ids[0]);
  EXPECT_EQ(s.fim_mid, ids[1]);
  EXPECT_EQ(s.fim_suf, ids[2]);
  EXPECT_EQ(s.fim_pad, ids[3]);
  EXPECT_EQ(s.fim_rep, ids[4]);
  EXPECT_EQ(s.fim_sep, ids[5]);
  EXPECT_EQ(s.eot, ids[6]);  // <|im_end|> preferred over <|endoftext|>
  for (int i : {3, 4, 5, 6}) EXPECT_TRUE(tok->is_eog(ids[i])) << names[i];
  for (int i : {0, 1, 2}) EXPECT_FALSE(tok->is_eog(ids[i])) << names[i];
  EXPECT_TRUE(tok->is_eog(s.eos));  // <|endoftext|>
  // Metadata ids win over spellings.
  v.special.fim_pre = ids[1];
  EXPECT_EQ(tokenizer::from_vocab(v)->special().fim_pre, ids[1]);
  // A FIM prompt assembled from ids and text round-trips through parse_special.
  std::string prompt = "<|fim_prefix|>ab<|fim_suffix|>ba<|fim_middle|>";
  auto enc = tok->encode(prompt, false, true);
  ASSERT_GE(enc.size(), 5u);
  EXPECT_EQ(enc.front(), ids[0]);
  EXPECT_EQ(enc.back(), ids[1]);
}

TEST(bpe_synthetic, loader_errors_name_the_problem) {
  auto v = tiny_bpe({"a b"});
  v.model = "wordpiece";
  try {
    tokenizer::from_vocab(v);
    FAIL() << "expected an error";
  } catch (const gguf::gguf_error& e) {
    EXPECT_NE(std::string(e.what()).find("supported: llama, gpt2"), std::string::npos);
  }
  auto w = tiny_bpe({"a b"});
  w.merges.clear();
  EXPECT_THROW(tokenizer::from_vocab(w), gguf::gguf_error);
  auto x = tiny_bpe({"a b"});
  x.scores.assign(3, 0.0f);
  EXPECT_THROW(tokenizer::from_vocab(x), gguf::gguf_error);
  gguf::writer wr;
  wr.add_string("general.architecture", "llama");
  std::string path = ::testing::TempDir() + "qf_no_tokenizer.gguf";
  wr.write(path);
  auto f = gguf::file::open(path);
  EXPECT_THROW(tokenizer::from_gguf(*f), gguf::gguf_error);
}

}  // namespace
}  // namespace qf::infer
