// The hand-written pre-tokenizers against an independent reference: data/
// pretokenize_cases.txt holds random strings (letters, marks, digits of several scripts,
// CJK, emoji, Unicode spaces, CR/LF, contractions) split by Python's regex engine using
// each family's published split patterns (tools/unicode/gen_pretokenize_cases.py).
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <sstream>

#include "inference/tokenizer/pretokenize.h"
#include "text/utf8.h"

namespace qf::infer {
namespace {

std::string unhex(const std::string& h) {
  std::string out;
  for (size_t i = 0; i + 1 < h.size(); i += 2) out.push_back(static_cast<char>(std::stoi(h.substr(i, 2), nullptr, 16)));
  return out;
}

size_t count_cpts(std::string_view s) {
  size_t n = 0, pos = 0;
  while (pos < s.size()) {
    text::decode_utf8(s, pos);
    ++n;
  }
  return n;
}

TEST(pretokenize_reference, matches_python_regex_splits) {
  const std::map<std::string, pre_type> families = {
      {"gpt2", pre_type::gpt2},     {"llama3", pre_type::llama3},
      {"qwen2", pre_type::qwen2},   {"qwen35", pre_type::qwen35},
      {"deepseek_coder", pre_type::deepseek_coder}, {"starcoder", pre_type::starcoder},
      {"fallback", pre_type::fallback}};
  std::ifstream f(std::string(QF_TOKENIZER_TEST_DIR) + "/data/pretokenize_cases.txt");
  ASSERT_TRUE(f) << "data/pretokenize_cases.txt missing";
  std::string line, text;
  size_t n_checked = 0, n_failed = 0;
  while (std::getline(f, line)) {
    if (line.empty() || line[0] == '#') continue;
    if (line.rfind("S ", 0) == 0) {
      text = unhex(line.substr(2));
      continue;
    }
    std::istringstream ls(line);
    std::string fam;
    ls >> fam;
    auto it = families.find(fam);
    ASSERT_NE(it, families.end()) << fam;
    std::vector<size_t> want;
    for (size_t n; ls >> n;) want.push_back(n);
    std::vector<std::string_view> words;
    pretokenize(it->second, text, words);
    std::vector<size_t> got;
    for (auto w : words) got.push_back(count_cpts(w));
    ++n_checked;
    if (got != want) {
      ++n_failed;
      std::ostringstream g, w;
      for (auto x : got) g << ' ' << x;
      for (auto x : want) w << ' ' << x;
      ADD_FAILURE() << fam << " on [" << text << "]\n  python:" << w.str() << "\n  ours:  " << g.str();
      if (n_failed > 20) break;
    }
  }
  EXPECT_GE(n_checked, 400u * 7);
  EXPECT_EQ(n_failed, 0u);
}

}  // namespace
}  // namespace qf::infer
