// Tokenizer benchmark: loads a vocabulary GGUF (default: the Qwen2 vocabulary of the
// shared test data) and prints load time, then encode speed in microseconds per KB of
// source code for a ~1.3 KB C++ snippet (the size of a completion prompt's suffix): the
// first call, repeated calls (word cache warm), calls on text whose words are all new,
// and streaming decode.
//
//   tokenizer_bench [VOCAB.gguf] [ITERATIONS]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "inference/gguf/gguf.h"
#include "inference/tokenizer/tokenizer.h"

namespace {

using clk = std::chrono::steady_clock;

double us_since(clk::time_point t0) {
  return std::chrono::duration<double, std::micro>(clk::now() - t0).count();
}

const char* k_source = R"(#include <algorithm>
#include <string>
#include <vector>

namespace demo {

// Returns the indices of the k largest values, largest first; ties keep the lower index.
std::vector<size_t> top_k(const std::vector<float>& values, size_t k) {
  std::vector<size_t> idx(values.size());
  for (size_t i = 0; i < idx.size(); ++i) idx[i] = i;
  k = std::min(k, idx.size());
  std::partial_sort(idx.begin(), idx.begin() + static_cast<std::ptrdiff_t>(k), idx.end(),
                    [&](size_t a, size_t b) {
                      if (values[a] != values[b]) return values[a] > values[b];
                      return a < b;
                    });
  idx.resize(k);
  return idx;
}

struct line_index {
  std::vector<size_t> starts{0};
  explicit line_index(const std::string& text) {
    for (size_t i = 0; i < text.size(); ++i)
      if (text[i] == '\n') starts.push_back(i + 1);
  }
  size_t line_of(size_t offset) const {
    auto it = std::upper_bound(starts.begin(), starts.end(), offset);
    return static_cast<size_t>(it - starts.begin()) - 1;
  }
};

int count_words(const std::string& s) {  // "héllo wörld" -> 2
  int n = 0;
  bool in_word = false;
  for (char c : s) {
    bool space = c == ' ' || c == '\t' || c == '\n';
    if (!space && !in_word) ++n;
    in_word = !space;
  }
  return n;
}

}  // namespace demo
)";

}  // namespace

int main(int argc, char** argv) {
  std::string path = argc > 1 ? argv[1] : std::string(QUICKFILL_TEST_DATA) + "/vocab/ggml-vocab-qwen2.gguf";
  int iters = argc > 2 ? std::atoi(argv[2]) : 200;
  const std::string src = k_source;
  const double kb = static_cast<double>(src.size()) / 1024.0;

  auto t0 = clk::now();
  std::unique_ptr<qf::infer::gguf::file> f;
  try {
    f = qf::infer::gguf::file::open(path);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "cannot open %s: %s\n", path.c_str(), e.what());
    return 1;
  }
  double open_us = us_since(t0);
  t0 = clk::now();
  auto tok = qf::infer::tokenizer::from_gguf(*f);
  double build_us = us_since(t0);
  std::printf("vocab %s: %d tokens, model %s, pre %s\n", path.c_str(), tok->n_vocab(),
              std::string(tok->model_kind()).c_str(), std::string(tok->pre_kind()).c_str());
  std::printf("load: gguf open %.1f ms, tokenizer build %.1f ms\n", open_us / 1000, build_us / 1000);

  t0 = clk::now();
  auto ids = tok->encode(src, false);
  double cold_us = us_since(t0);

  std::vector<double> times;
  size_t n_tokens = 0;
  for (int i = 0; i < iters; ++i) {
    auto t = clk::now();
    auto v = tok->encode(src, false);
    times.push_back(us_since(t));
    n_tokens = v.size();
  }
  std::sort(times.begin(), times.end());
  double best = times.front(), median = times[times.size() / 2];
  std::printf("encode %zu bytes -> %zu tokens: first call %.1f us (%.1f us/KB); repeated: best %.1f us, median %.1f us "
              "(%.1f us/KB)\n",
              src.size(), n_tokens, cold_us, cold_us / kb, best, median, median / kb);

  // Every word new to the cache: a fresh tokenizer per iteration would re-load the
  // vocabulary, so instead vary the text (digits change every identifier).
  std::vector<double> fresh;
  for (int i = 0; i < std::min(iters, 50); ++i) {
    std::string s = src;
    for (char& c : s)
      if (c >= 'a' && c <= 'z') c = static_cast<char>('a' + (c - 'a' + i + 1) % 26);
    auto t = clk::now();
    auto v = tok->encode(s, false);
    fresh.push_back(us_since(t));
  }
  std::sort(fresh.begin(), fresh.end());
  std::printf("encode with unseen words (letters rotated): median %.1f us (%.1f us/KB)\n", fresh[fresh.size() / 2],
              fresh[fresh.size() / 2] / kb);

  double dbest = 1e30;
  for (int i = 0; i < iters; ++i) {
    auto t = clk::now();
    qf::infer::detokenizer d(*tok, tok->add_space_prefix());
    std::string out;
    for (int32_t id : ids) out += d.push(id);
    out += d.flush();
    dbest = std::min(dbest, us_since(t));
    if (out != src) {
      std::fprintf(stderr, "roundtrip mismatch\n");
      return 1;
    }
  }
  std::printf("streaming decode %zu tokens: best %.1f us (%.1f us/KB)\n", ids.size(), dbest, dbest / kb);
  return 0;
}
