// Command-line behaviour of the tools, through the real binary: `run` writes
// the generated text and nothing else to stdout; `perplexity` ends stdout with
// the perplexity alone; `bench --json` gives one entry per test; hostile or
// missing model files give a clear message and a non-zero exit, never a crash.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include <boost/json.hpp>

#include "inference/gguf/gguf.h"
#include "inference/tokenizer/tokenizer.h"
#include "tests/server/cli/tool_runner.h"

namespace qf::test {
namespace {

class Tools : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = scratch_dir("cli");
    model_ = dir_ + "/tiny-qwen2.gguf";
    run_result r = run_quickfill({"gguf", "synth", "--arch", "qwen2", "--preset", "tiny", "--std", "0.08", "-o", model_});
    synth_ok_ = r.exit_code == 0;
    synth_err_ = r.err;
  }
  void SetUp() override { ASSERT_TRUE(synth_ok_) << synth_err_; }
  static std::string last_line(const std::string& s) {
    std::string t = s;
    while (!t.empty() && t.back() == '\n') t.pop_back();
    auto nl = t.rfind('\n');
    return nl == std::string::npos ? t : t.substr(nl + 1);
  }
  static inline std::string dir_, model_, synth_err_;
  static inline bool synth_ok_ = false;
};

TEST_F(Tools, RunPrintsOnlyTheGeneratedText) {
  std::string dump = dir_ + "/run.bin";
  const std::string prompt = "for (int i = 0; i < n; ++i)";
  run_result r = run_quickfill({"run", "-m", model_, "-p", prompt, "-n", "12", "--temp", "0", "--ignore-eos", "-t",
                                "2", "--dump-logits", dump});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("tokens/s"), std::string::npos) << r.err;

  // The generated ids: the decode rows' tokens, then the argmax of the last row.
  std::string d = read_file(dump);
  ASSERT_GE(d.size(), 20u);
  int32_t hdr[3];
  std::memcpy(hdr, d.data() + 8, sizeof hdr);
  const int32_t n_rows = hdr[0], n_vocab = hdr[1], n_prompt = hdr[2];
  ASSERT_EQ(n_rows, n_prompt + 11);
  std::vector<int32_t> ids(static_cast<size_t>(n_rows));
  std::memcpy(ids.data(), d.data() + 20, ids.size() * 4);
  const float* last = reinterpret_cast<const float*>(d.data() + 20 + 4 * n_rows) + size_t(n_rows - 1) * n_vocab;
  std::vector<int32_t> gen(ids.begin() + n_prompt, ids.end());
  gen.push_back(static_cast<int32_t>(std::max_element(last, last + n_vocab) - last));

  auto f = infer::gguf::file::open(model_);
  auto tok = infer::tokenizer::from_gguf(*f);
  EXPECT_EQ(std::vector<int32_t>(ids.begin(), ids.begin() + n_prompt), tok->encode(prompt, tok->add_bos_default()));
  EXPECT_EQ(r.out, tok->decode(gen));
}

TEST_F(Tools, RunIsDeterministicForASeed) {
  std::vector<std::string> a{"run", "-m", model_, "-p", "x = ", "-n", "10", "--temp", "1.0", "--seed", "42",
                             "--ignore-eos", "-t", "2"};
  run_result r1 = run_quickfill(a), r2 = run_quickfill(a);
  ASSERT_EQ(r1.exit_code, 0) << r1.err;
  EXPECT_EQ(r1.out, r2.out);
}

TEST_F(Tools, PerplexityPrintsTheNumberLast) {
  std::string text;
  for (int i = 0; i < 40; ++i) text += "if (x" + std::to_string(i) + " > 0) { y += x" + std::to_string(i) + "; }\n";
  write_file(dir_ + "/text.txt", text);
  run_result r = run_quickfill({"perplexity", "-m", model_, "-f", dir_ + "/text.txt", "-c", "32", "-t", "2"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::string line = last_line(r.out);
  char* end = nullptr;
  double ppl = std::strtod(line.c_str(), &end);
  ASSERT_TRUE(end && *end == '\0' && end != line.c_str()) << "last line is not a number: '" << line << "'";
  // A random-weight model is close to uniform over its 512 tokens.
  EXPECT_GT(ppl, 50.0);
  EXPECT_LT(ppl, 5000.0);
}

TEST_F(Tools, PerplexityOfStoriesOnItsOwnGreedyTextIsLow) {
  std::string data = test_data_dir();
  if (data.empty()) GTEST_SKIP() << "shared data not found (QUICKFILL_TEST_DATA)";
  std::string m = dir_ + "/stories.gguf";
  run_result c = run_quickfill({"gguf", "from-llama2c", data + "/stories260K/stories260K.bin",
                                data + "/stories260K/tok512.bin", "-o", m});
  ASSERT_EQ(c.exit_code, 0) << c.err;
  run_result r = run_quickfill({"perplexity", "-m", m, "-f", data + "/stories260K/expected-greedy-200.txt", "-c",
                                "64", "-t", "2"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  double ppl = std::strtod(last_line(r.out).c_str(), nullptr);
  std::printf("stories260K perplexity on its own greedy output (ctx 64): %.4f\n", ppl);
  EXPECT_GT(ppl, 1.0);
  EXPECT_LT(ppl, 3.0);  // text the model itself chose greedily is highly predictable to it
}

// Same windows, same BOS rule, same scored half as the NumPy reference computes
// them; a synthetic llama model (adds BOS) and stories260K (when present).
TEST_F(Tools, PerplexityMatchesTheNumPyReference) {
  std::string py = python_with_numpy();
  if (py.empty()) GTEST_SKIP() << "/usr/bin/python3 with numpy not available";
  std::string llama = dir_ + "/tiny-llama.gguf";
  run_result s = run_quickfill({"gguf", "synth", "--arch", "llama", "--std", "0.1", "--seed", "3", "-o", llama});
  ASSERT_EQ(s.exit_code, 0) << s.err;
  std::string text;
  for (int i = 0; i < 30; ++i) text += "while (n" + std::to_string(i % 7) + " > 1) n = n / 2 + " + std::to_string(i) + ";\n";
  write_file(dir_ + "/ppl.txt", text);
  std::vector<std::pair<std::string, std::string>> cases = {{llama, dir_ + "/ppl.txt"}};
  std::string data = test_data_dir();
  if (!data.empty()) {
    std::string m = dir_ + "/stories-ppl.gguf";
    run_result c = run_quickfill({"gguf", "from-llama2c", data + "/stories260K/stories260K.bin",
                                  data + "/stories260K/tok512.bin", "-o", m});
    ASSERT_EQ(c.exit_code, 0) << c.err;
    cases.emplace_back(m, data + "/stories260K/expected-greedy-200.txt");
  }
  for (const auto& [model, file] : cases) {
    std::string toks = dir_ + "/ppl-tokens.bin";
    run_result r = run_quickfill({"perplexity", "-m", model, "-f", file, "-c", "48", "-t", "2", "--kv-type", "f32",
                                  "--dump-tokens", toks});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    run_result ref = run_process(
        {py, source_dir() + "/tools/reference/reference_forward.py", model, "--perplexity", toks, "--ctx", "48"});
    ASSERT_EQ(ref.exit_code, 0) << ref.err;
    double got = std::strtod(last_line(r.out).c_str(), nullptr), want = std::strtod(ref.out.c_str(), nullptr);
    std::printf("%s: perplexity %.4f, reference %.6f\n", model.c_str(), got, want);
    EXPECT_NEAR(got, want, 2e-4 * want + 1e-4) << model;
  }
}

TEST_F(Tools, BenchJsonHasOneEntryPerTest) {
  run_result r = run_quickfill({"bench", "-m", model_, "-p", "16", "-n", "4", "-r", "1", "-t", "1", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  boost::json::value v = boost::json::parse(r.out);
  const auto& a = v.as_array();
  ASSERT_EQ(a.size(), 2u);
  EXPECT_EQ(a[0].at("test").as_string(), "pp16");
  EXPECT_EQ(a[1].at("test").as_string(), "tg4");
  EXPECT_GT(a[1].at("tokens_per_s_median").as_double(), 0.0);
  EXPECT_GT(a[1].at("weight_bytes").to_number<double>(), 0.0);
}

TEST_F(Tools, BenchRunsTestsAtEachDepth) {
  run_result r =
      run_quickfill({"bench", "-m", model_, "-p", "8", "-n", "4", "-d", "0,24", "-r", "1", "-t", "1", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const boost::json::value v = boost::json::parse(r.out);
  const auto& a = v.as_array();
  ASSERT_EQ(a.size(), 4u);
  EXPECT_EQ(a[0].at("test").as_string(), "pp8");
  EXPECT_EQ(a[1].at("test").as_string(), "tg4");
  EXPECT_EQ(a[2].at("test").as_string(), "pp8 @ d24");
  EXPECT_EQ(a[3].at("test").as_string(), "tg4 @ d24");
  EXPECT_EQ(a[0].at("n_depth").as_int64(), 0);
  EXPECT_EQ(a[3].at("n_depth").as_int64(), 24);
  EXPECT_GT(a[3].at("tokens_per_s_median").as_double(), 0.0);
  run_result bad = run_quickfill({"bench", "-m", model_, "-d", "x"});
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("-d"), std::string::npos) << bad.err;
}

TEST_F(Tools, GgufInfoSummarizesAFile) {
  run_result r = run_quickfill({"gguf", "info", model_, "--tensors"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("general.architecture"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\"qwen2\""), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("tensors: 26,"), std::string::npos) << r.out;  // 2 layers x 12 + embd + norm
  EXPECT_NE(r.out.find("blk.1.attn_q.bias"), std::string::npos) << r.out;
}

TEST_F(Tools, HostileModelFilesFailCleanly) {
  std::string good = read_file(model_);
  ASSERT_GT(good.size(), 4096u);
  std::vector<std::pair<std::string, std::string>> cases = {
      {"empty", ""},
      {"garbage", std::string(4096, '\x5a')},
      {"truncated_header", good.substr(0, 64)},
      {"truncated_tensors", good.substr(0, good.size() / 2)},
  };
  // Header claiming 2^40 tensors and 2^40 metadata keys.
  std::string huge = good.substr(0, 8);
  uint64_t big = uint64_t{1} << 40;
  huge.append(reinterpret_cast<const char*>(&big), 8).append(reinterpret_cast<const char*>(&big), 8);
  huge.append(std::string(64, '\0'));
  cases.emplace_back("huge_counts", huge);
  for (const auto& [name, bytes] : cases) {
    std::string path = dir_ + "/" + name + ".gguf";
    write_file(path, bytes);
    for (std::vector<std::string> cmd :
         {std::vector<std::string>{"run", "-m", path, "-n", "4"}, {"bench", "-m", path, "-r", "1"},
          {"perplexity", "-m", path, "-f", model_}}) {
      run_result r = run_quickfill(cmd);
      EXPECT_EQ(r.signal, 0) << name << " " << cmd[0] << " crashed";
      EXPECT_EQ(r.exit_code, 1) << name << " " << cmd[0] << ": " << r.err;
      EXPECT_NE(r.err.find("cannot load model"), std::string::npos) << name << ": " << r.err;
      EXPECT_TRUE(r.out.empty()) << name << " " << cmd[0];
    }
    run_result info = run_quickfill({"gguf", "info", path});
    EXPECT_EQ(info.signal, 0) << name;
    EXPECT_EQ(info.exit_code, 1) << name << ": " << info.err;
  }
  run_result missing = run_quickfill({"run", "-m", dir_ + "/does-not-exist.gguf"});
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_NE(missing.err.find("does-not-exist.gguf"), std::string::npos) << missing.err;
}

TEST_F(Tools, BadArgumentsAreReported) {
  run_result r = run_quickfill({"run", "-m", model_, "--no-such-option"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--no-such-option"), std::string::npos) << r.err;
  r = run_quickfill({"run", "-m", model_, "-n", "lots"});
  EXPECT_EQ(r.exit_code, 2);
  r = run_quickfill({"run"});
  EXPECT_NE(r.exit_code, 0);
  r = run_quickfill({"gguf", "synth", "--preset", "qwen9", "-o", dir_ + "/x.gguf"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("qwen2.5-coder-0.5b"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace qf::test
