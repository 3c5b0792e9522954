#include "tests/inference/tokenizer/vocab_files.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <sstream>
#include <stdexcept>

#include "inference/gguf/gguf.h"
#include "tests/shared_test_data.h"

namespace qf::infer::test {

std::optional<std::string> vocab_dir() {
  const std::string dir = qf::test::shared_test_data(QUICKFILL_TEST_DATA) + "/vocab";
  if (!std::filesystem::exists(dir + "/ggml-vocab-gpt-2.gguf")) return std::nullopt;
  return dir;
}

namespace {

std::string slurp(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw std::runtime_error("cannot read " + path);
  std::ostringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

std::vector<std::string> split(const std::string& s, const std::string& sep) {
  std::vector<std::string> out;
  size_t start = 0;
  while (true) {
    size_t p = s.find(sep, start);
    if (p == std::string::npos) {
      out.push_back(s.substr(start));
      return out;
    }
    out.push_back(s.substr(start, p - start));
    start = p + sep.size();
  }
}

}  // namespace

std::vector<vector_case> read_vectors(const std::string& dir, const std::string& name) {
  std::string inp = slurp(dir + "/ggml-vocab-" + name + ".gguf.inp");
  std::string out = slurp(dir + "/ggml-vocab-" + name + ".gguf.out");
  // Every string is followed by "\n__ggml_vocab_test__\n"; the last split part is empty.
  auto texts = split(inp, "\n__ggml_vocab_test__\n");
  if (texts.empty() || !texts.back().empty()) throw std::runtime_error(name + ".inp: missing final separator");
  texts.pop_back();
  auto lines = split(out, "\n");
  if (!lines.empty() && lines.back().empty()) lines.pop_back();
  if (lines.size() != texts.size())
    throw std::runtime_error(name + ": " + std::to_string(texts.size()) + " strings but " +
                             std::to_string(lines.size()) + " id lines");
  std::vector<vector_case> cases;
  for (size_t i = 0; i < texts.size(); ++i) {
    vector_case c;
    c.text = texts[i];
    std::istringstream ls(lines[i]);
    int64_t id;
    while (ls >> id) c.ids.push_back(static_cast<int32_t>(id));
    cases.push_back(std::move(c));
  }
  return cases;
}

const tokenizer* load_vocab(const std::string& name) {
  static std::mutex mu;
  static std::map<std::string, std::unique_ptr<tokenizer>> cache;
  std::lock_guard lk(mu);
  auto it = cache.find(name);
  if (it != cache.end()) return it->second.get();
  auto dir = vocab_dir();
  if (!dir) return nullptr;
  std::string path = *dir + "/ggml-vocab-" + name + ".gguf";
  if (!std::filesystem::exists(path)) return nullptr;
  auto f = gguf::file::open(path);
  auto tok = tokenizer::from_gguf(*f);
  return cache.emplace(name, std::move(tok)).first->second.get();
}

}  // namespace qf::infer::test
