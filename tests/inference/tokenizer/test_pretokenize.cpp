// Pre-tokenizer rules of each family on hand-picked strings (no shared data needed),
// plus the Unicode table and UTF-8 helpers they rely on.
#include <gtest/gtest.h>

#include "inference/tokenizer/pretokenize.h"
#include "inference/tokenizer/unicode.h"
#include "text/utf8.h"

namespace qf::infer {
namespace {

std::vector<std::string> split(pre_type t, std::string_view s) {
  std::vector<std::string_view> w;
  pretokenize(t, s, w);
  return {w.begin(), w.end()};
}

using V = std::vector<std::string>;

TEST(unicode_table, categories_and_whitespace) {
  using unicode::flags;
  EXPECT_TRUE(flags('a').is_letter());
  EXPECT_TRUE(flags(0x00C4).is_letter());   // Ä
  EXPECT_TRUE(flags(0x4E2D).is_letter());   // 中
  EXPECT_TRUE(flags('7').is_number());
  EXPECT_TRUE(flags(0x00BD).is_number());   // ½ (No)
  EXPECT_TRUE(flags(0x0301).is_mark());     // combining acute
  EXPECT_TRUE(flags('!').is_punct());
  EXPECT_FALSE(flags('$').is_punct());      // Sc
  EXPECT_EQ(flags('$').category(), unicode::cat::symbol);
  EXPECT_TRUE(flags(0x1F999).category() == unicode::cat::symbol);  // 🦙 (So, above the BMP)
  EXPECT_TRUE(flags(0x10400).is_letter());  // Deseret capital long I
  for (uint32_t c : {0x09u, 0x0Au, 0x0Bu, 0x0Cu, 0x0Du, 0x20u, 0x85u, 0xA0u, 0x2003u, 0x3000u})
    EXPECT_TRUE(flags(c).is_whitespace()) << c;
  EXPECT_FALSE(flags(0x1C).is_whitespace());
  EXPECT_FALSE(flags('x').is_whitespace());
}

TEST(byte_map, gpt2_alphabet_roundtrips) {
  EXPECT_EQ(unicode::byte_to_utf8(' '), "\xC4\xA0");  // Ġ
  EXPECT_EQ(unicode::byte_to_utf8('\n'), "\xC4\x8A");  // Ċ
  EXPECT_EQ(unicode::byte_to_utf8('A'), "A");
  for (int b = 0; b < 256; ++b) {
    const std::string& s = unicode::byte_to_utf8(static_cast<uint8_t>(b));
    size_t pos = 0;
    EXPECT_EQ(unicode::utf8_cpt_to_byte(text::decode_utf8(s, pos)), b);
  }
}

TEST(pretokenize, gpt2_rules) {
  EXPECT_EQ(split(pre_type::gpt2, "Hello world"), (V{"Hello", " world"}));
  EXPECT_EQ(split(pre_type::gpt2, "I'll  go"), (V{"I", "'ll", " ", " go"}));
  EXPECT_EQ(split(pre_type::gpt2, "x = 12+3;\n"), (V{"x", " =", " 12", "+", "3", ";", "\n"}));
  EXPECT_EQ(split(pre_type::gpt2, "a\tb"), (V{"a", "\t", "b"}));
  EXPECT_EQ(split(pre_type::gpt2, "IT'S"), (V{"IT", "'", "S"}));  // contractions are case-sensitive
}

TEST(pretokenize, llama3_rules) {
  EXPECT_EQ(split(pre_type::llama3, "12345"), (V{"123", "45"}));
  EXPECT_EQ(split(pre_type::llama3, "IT'S ok"), (V{"IT", "'S", " ok"}));
  EXPECT_EQ(split(pre_type::llama3, "if (x) {\n\n    return;"),
            (V{"if", " (", "x", ")", " {\n\n", "   ", " return", ";"}));
  EXPECT_EQ(split(pre_type::llama3, "a  \n\n  b"), (V{"a", "  \n\n", " ", " b"}));
  EXPECT_EQ(split(pre_type::llama3, "\tfoo"), (V{"\tfoo"}));
}

TEST(pretokenize, qwen2_and_qwen35_rules) {
  EXPECT_EQ(split(pre_type::qwen2, "x=123"), (V{"x", "=", "1", "2", "3"}));
  // e + combining acute: qwen2 splits the mark off, qwen35 keeps it with the letter.
  EXPECT_EQ(split(pre_type::qwen2, "re\xCC\x81sume"), (V{"re", "\xCC\x81sume"}));
  EXPECT_EQ(split(pre_type::qwen35, "re\xCC\x81sume"), (V{"re\xCC\x81sume"}));
}

TEST(pretokenize, deepseek_coder_rules) {
  EXPECT_EQ(split(pre_type::deepseek_coder, "int x1 = 42;\n"),
            (V{"int", " x", "1", " = ", "4", "2", ";", "\n"}));
  EXPECT_EQ(split(pre_type::deepseek_coder, "\xE4\xB8\xAD\xE6\x96\x87 ok"),
            (V{"\xE4\xB8\xAD\xE6\x96\x87", " ok"}));
}

TEST(pretokenize, starcoder_rules) {
  EXPECT_EQ(split(pre_type::starcoder, "a 12b"), (V{"a", " ", "1", "2", "b"}));
  EXPECT_EQ(split(pre_type::starcoder, "x  = y"), (V{"x", " ", " =", " y"}));
}

TEST(pretokenize, fallback_rules) {
  EXPECT_EQ(split(pre_type::fallback, "a+=12345"), (V{"a", "+=", "123", "45"}));
}

TEST(pretokenize, words_cover_the_text_exactly) {
  std::string s = "  fn main() {\r\n\tlet x\u00A0= \"h\u00E9llo\u4E16\u754C\"; // 3.14 \U0001F999\n}\n";
  for (auto t : {pre_type::gpt2, pre_type::llama3, pre_type::qwen2, pre_type::qwen35, pre_type::deepseek_coder,
                 pre_type::starcoder, pre_type::fallback}) {
    std::string joined;
    for (auto& w : split(t, s)) {
      EXPECT_FALSE(w.empty());
      joined += w;
    }
    EXPECT_EQ(joined, s) << pre_type_name(t);
  }
}

TEST(pretokenize, family_names) {
  bool known = false;
  EXPECT_EQ(pre_type_from_name("qwen2", &known), pre_type::qwen2);
  EXPECT_TRUE(known);
  EXPECT_EQ(pre_type_from_name("refact", &known), pre_type::starcoder);
  EXPECT_EQ(pre_type_from_name("llama-bpe", &known), pre_type::llama3);
  EXPECT_EQ(pre_type_from_name("something-new", &known), pre_type::fallback);
  EXPECT_FALSE(known);
}

}  // namespace
}  // namespace qf::infer
