// The device self-check (inference/model/device_check.h) against a device
// that misbehaves on purpose (faulty_backend.h): a faithful one passes, and
// wrong numbers, a device error or out-of-memory each fail with a reason.
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <string>

#include "inference/convert/quantize_model.h"
#include "inference/convert/synth_model.h"
#include "inference/model/device_check.h"
#include "inference/model/model.h"
#include "tests/inference/model/faulty_backend.h"

namespace qf::test {
namespace {

namespace fs = std::filesystem;

// A tiny synthetic model of `arch` in `type`, written once per test.
std::string synth_file(const std::string& arch, infer::ggml_type type) {
  const fs::path dir = fs::temp_directory_path() / ("qf_device_check_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const std::string path = (dir / (arch + "_" + std::string(infer::traits(type).name) + ".gguf")).string();
  if (!fs::exists(path)) {
    auto spec = infer::convert::synth_preset("tiny", arch);
    spec.init_std = 0.2f;
    if (type == infer::ggml_type::f16 || type == infer::ggml_type::f32) {
      infer::convert::write_synth_model(spec, type, path);
    } else {  // synthetic models are written in float, then quantized
      infer::convert::write_synth_model(spec, infer::ggml_type::f16, path + ".f16");
      infer::gguf::quantize_model(path + ".f16", path, infer::traits(type).name, 2);
      fs::remove(path + ".f16");
    }
  }
  return path;
}

infer::device_check_report check(const std::string& path, fault f) {
  auto be = std::make_unique<faulty_backend>(f, 1);
  auto m = infer::model::load(path, std::move(be));
  return infer::check_against_cpu(*m, path, {.n_threads = 2});
}

}  // namespace

TEST(device_check, a_device_that_computes_what_the_cpu_does_passes) {
  for (const std::string arch : {"qwen2", "starcoder2"}) {
    for (infer::ggml_type t : {infer::ggml_type::f16, infer::ggml_type::q8_0}) {
      const infer::device_check_report r = check(synth_file(arch, t), fault::none);
      EXPECT_TRUE(r.passed) << arch << ": " << r.failure;
      EXPECT_TRUE(r.failure.empty());
      EXPECT_LT(r.worst_nmse, 1e-6) << arch;
      EXPECT_GE(r.positions, 8 + 4) << "the prefill's positions and the decode steps";
      EXPECT_NE(r.device.find("fakegpu"), std::string::npos);
    }
  }
}

TEST(device_check, wrong_numbers_fail_with_where_they_were_seen) {
  for (const std::string arch : {"qwen2", "starcoder2"}) {  // RMSNorm, LayerNorm
    const infer::device_check_report r = check(synth_file(arch, infer::ggml_type::q8_0), fault::wrong_numbers);
    EXPECT_FALSE(r.passed) << arch;
    EXPECT_GT(r.worst_nmse, 1e-3) << arch;
    EXPECT_NE(r.failure.find("logits differ from the CPU's"), std::string::npos) << r.failure;
    EXPECT_NE(r.failure.find("prefill position"), std::string::npos) << r.failure;
  }
}

TEST(device_check, a_device_error_fails_with_its_message) {
  const infer::device_check_report r = check(synth_file("qwen2", infer::ggml_type::q8_0), fault::device_error);
  EXPECT_FALSE(r.passed);
  EXPECT_NE(r.failure.find("error in the prefill"), std::string::npos) << r.failure;
  EXPECT_NE(r.failure.find("CUDA error in gemv"), std::string::npos) << r.failure;
}

TEST(device_check, out_of_memory_on_the_device_fails_as_such) {
  const infer::device_check_report r = check(synth_file("qwen2", infer::ggml_type::q8_0), fault::out_of_memory);
  EXPECT_FALSE(r.passed);
  EXPECT_EQ(r.failure.rfind("out of memory while", 0), 0u) << r.failure;
}

TEST(device_check, a_file_the_cpu_cannot_load_is_reported_not_thrown) {
  const std::string path = synth_file("qwen2", infer::ggml_type::q8_0);
  auto m = infer::model::load(path, std::make_unique<faulty_backend>(fault::none, 1));
  const infer::device_check_report r = infer::check_against_cpu(*m, path + ".missing");
  EXPECT_FALSE(r.passed);
  EXPECT_NE(r.failure.find("loading the CPU reference"), std::string::npos) << r.failure;
}

}  // namespace qf::test
