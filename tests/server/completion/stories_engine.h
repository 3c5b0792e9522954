// The tiny trained Llama of the shared test data (stories260K, see
// ../shared/data/README.md) as a real engine for the completion engine
// tests: converted to GGUF (F32) once per test binary into a scratch folder
// that goes when the tests end. stories_model() is empty when the data is
// absent (tests then skip).
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <memory>
#include <string>

#include "inference/convert/llama2c.h"
#include "server/completion/decode/engine_backend.h"
#include "tests/shared_test_data.h"

namespace qf::test {

inline const std::filesystem::path& stories_scratch() {
  static const std::filesystem::path d = [] {
    std::filesystem::path p =
        std::filesystem::temp_directory_path() / ("qf_stories_engine_" + std::to_string(::getpid()));
    std::filesystem::create_directories(p);
    return p;
  }();
  return d;
}

class stories_cleanup : public ::testing::Environment {
 public:
  void TearDown() override {
    std::error_code ec;
    std::filesystem::remove_all(stories_scratch(), ec);
  }
};
inline const auto* const k_stories_cleanup = ::testing::AddGlobalTestEnvironment(new stories_cleanup);

inline const std::string& stories_model() {
  static const std::string path = []() -> std::string {
    const std::filesystem::path data =
        std::filesystem::path(shared_test_data(QUICKFILL_TEST_DATA_DIR)) / "stories260K";
    if (!std::filesystem::exists(data / "stories260K.bin")) return "";
    const std::string p = (stories_scratch() / "stories260K-f32.gguf").string();
    infer::convert::convert_llama2c((data / "stories260K.bin").string(), (data / "tok512.bin").string(), p,
                                    infer::ggml_type::f32);
    return p;
  }();
  return path;
}

// The model on the CPU with one thread; null (and a failed expectation) when it does not load.
inline std::shared_ptr<server::completion::lm_backend> load_stories_engine() {
  server::completion::engine_options eo;
  eo.threads = 1;
  eo.device = "cpu";
  std::string err;
  std::shared_ptr<server::completion::lm_backend> be = server::completion::load_engine_backend(stories_model(), eo, &err);
  EXPECT_TRUE(be) << err;
  return be;
}

}  // namespace qf::test
