// stories260K golden test: the llama2.c checkpoint converted to GGUF by our
// own tool must reproduce llama2.c's greedy 200-token output byte for byte in
// F32 and F16; Q8_0 agreement is measured and reported (quantization changes
// logits, so exact agreement is not expected). The NumPy reference run on the
// converted file must reproduce it too, which checks the converter
// independently of the engine. Skips when ../shared/data is absent.
#include <gtest/gtest.h>

#include <filesystem>

#include "tests/server/cli/tool_runner.h"

namespace qf::test {
namespace {

class Stories260K : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    std::string data = test_data_dir();
    if (data.empty()) return;
    dir_ = data + "/stories260K";
    if (!std::filesystem::exists(dir_ + "/stories260K.bin")) return;
    expected_ = read_file(dir_ + "/expected-greedy-200.txt");
    work_ = scratch_dir("stories260k");
    for (std::string type : {"f32", "f16"}) {
      run_result r = run_quickfill({"gguf", "from-llama2c", dir_ + "/stories260K.bin", dir_ + "/tok512.bin", "-o",
                                    model(type), "--type", type});
      convert_ok_ = convert_ok_ && r.exit_code == 0;
      if (r.exit_code != 0) convert_err_ += r.err;
    }
    available_ = true;
  }
  void SetUp() override {
    if (!available_) GTEST_SKIP() << "stories260K not found (set QUICKFILL_TEST_DATA to the shared data folder)";
    ASSERT_TRUE(convert_ok_) << "from-llama2c failed: " << convert_err_;
  }
  static std::string model(const std::string& type) { return work_ + "/stories260K-" + type + ".gguf"; }
  static run_result greedy(const std::string& path) {
    return run_quickfill({"run", "-m", path, "-n", "200", "--temp", "0", "-t", "1"});
  }
  static size_t common_prefix(const std::string& a, const std::string& b) {
    size_t n = 0;
    while (n < a.size() && n < b.size() && a[n] == b[n]) ++n;
    return n;
  }

  static inline std::string dir_, work_, expected_, convert_err_;
  static inline bool available_ = false, convert_ok_ = true;
};

TEST_F(Stories260K, F32GreedyMatchesLlama2c) {
  run_result r = greedy(model("f32"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, expected_) << "first difference at byte " << common_prefix(r.out, expected_);
}

TEST_F(Stories260K, F16GreedyMatchesLlama2c) {
  run_result r = greedy(model("f16"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, expected_) << "first difference at byte " << common_prefix(r.out, expected_);
}

TEST_F(Stories260K, Q8_0AgreementIsReported) {
  std::string q8 = work_ + "/stories260K-q8_0.gguf";
  run_result q = run_quickfill({"gguf", "quantize", model("f32"), q8, "q8_0"});
  ASSERT_EQ(q.exit_code, 0) << q.err;
  run_result r = greedy(q8);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  ASSERT_FALSE(r.out.empty());
  size_t n = common_prefix(r.out, expected_);
  std::printf("Q8_0 greedy output agrees with llama2.c for %zu of %zu bytes%s\n", n, expected_.size(),
              n == expected_.size() && r.out.size() == expected_.size() ? " (identical)" : "");
  RecordProperty("q8_0_agreeing_bytes", static_cast<int>(n));
  // Q8_0 keeps the first sentence: a broken quantized path diverges at once.
  EXPECT_GE(n, expected_.find('.') + 1) << r.out;
}

TEST_F(Stories260K, NumPyReferenceOnConvertedFileMatchesLlama2c) {
  std::string py = python_with_numpy();
  if (py.empty()) GTEST_SKIP() << "/usr/bin/python3 with numpy not available";
  run_result r = run_process({py, source_dir() + "/tools/reference/reference_forward.py", model("f32"), "--greedy", "200"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, expected_);
}

}  // namespace
}  // namespace qf::test
