// The device self-check at load (engine_backend.h): a model that lands on a
// device is checked against the CPU once per device, binary and model, and a
// device that fails (wrong numbers, a device error) hands the model to the
// CPU with one message for the user. The device is faulty_backend.h, a CPU
// backend with injected faults; the verdicts go to a file in a scratch folder.
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

#include "inference/convert/quantize_model.h"
#include "inference/convert/synth_model.h"
#include "server/completion/decode/device_verdicts.h"
#include "server/completion/decode/engine_backend.h"
#include "tests/inference/model/faulty_backend.h"

using namespace qf::server::completion;
using qf::test::fault;
using qf::test::faulty_backend;
namespace fs = std::filesystem;

namespace {

struct scratch {
  fs::path dir = fs::temp_directory_path() / ("qf_device_fallback_" + std::to_string(::getpid()));
  std::string model, verdicts;
  scratch() {
    fs::create_directories(dir);
    model = (dir / "tiny-q8_0.gguf").string();
    verdicts = (dir / "cache" / "device-checks.json").string();
    if (!fs::exists(model)) {
      auto spec = qf::infer::convert::synth_preset("tiny", "qwen2");
      spec.init_std = 0.2f;
      qf::infer::convert::write_synth_model(spec, qf::infer::ggml_type::f16, model + ".f16");
      qf::infer::gguf::quantize_model(model + ".f16", model, "q8_0", 2);
      fs::remove(model + ".f16");
    }
  }
  ~scratch() { fs::remove_all(dir); }
};

// Loads the scratch model onto a fresh faulty device; `ops` counts what that device ran.
struct load_result {
  std::unique_ptr<lm_backend> be;
  std::string error;
  std::vector<std::string> notices;
  std::shared_ptr<int> ops;
};

load_result load(const scratch& s, fault f) {
  load_result r;
  device_check_policy p;
  p.verdicts_file = s.verdicts;
  p.make_backend = [&r, f](const engine_options&) {
    auto be = std::make_unique<faulty_backend>(f, 1);
    r.ops = be->ops;
    return be;
  };
  p.notice = [&r](const std::string& m) { r.notices.push_back(m); };
  engine_options e;
  e.threads = 2;
  r.be = load_engine_backend(s.model, e, &r.error, p);
  return r;
}

}  // namespace

TEST(device_fallback, a_device_that_agrees_with_the_cpu_serves_and_is_not_checked_twice) {
  scratch s;
  load_result first = load(s, fault::none);
  ASSERT_TRUE(first.be) << first.error;
  EXPECT_NE(first.be->describe().find("fakegpu"), std::string::npos) << first.be->describe();
  EXPECT_TRUE(first.notices.empty());
  EXPECT_GT(*first.ops, 0) << "the check ran the model on the device";
  auto all = all_device_verdicts(s.verdicts);
  ASSERT_EQ(all.size(), 1u);
  EXPECT_TRUE(all[0].second.passed);
  EXPECT_EQ(all[0].second.model, s.model);
  struct stat st {};
  ASSERT_EQ(::stat(s.verdicts.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);

  load_result second = load(s, fault::none);
  ASSERT_TRUE(second.be) << second.error;
  EXPECT_EQ(*second.ops, 0) << "a kept verdict is not checked again";
  EXPECT_EQ(all_device_verdicts(s.verdicts).size(), 1u);
}

TEST(device_fallback, wrong_numbers_hand_the_model_to_the_cpu_with_one_message) {
  scratch s;
  load_result r = load(s, fault::wrong_numbers);
  ASSERT_TRUE(r.be) << r.error;
  EXPECT_EQ(r.be->describe().find("fakegpu"), std::string::npos) << r.be->describe();
  EXPECT_NE(r.be->describe().find("cpu"), std::string::npos) << r.be->describe();
  ASSERT_EQ(r.notices.size(), 1u);
  EXPECT_NE(r.notices[0].find("GPU self-check failed"), std::string::npos) << r.notices[0];
  EXPECT_NE(r.notices[0].find("on the CPU instead"), std::string::npos) << r.notices[0];
  EXPECT_NE(r.notices[0].find("quickfill doctor"), std::string::npos) << r.notices[0];
  auto all = all_device_verdicts(s.verdicts);
  ASSERT_EQ(all.size(), 1u);
  EXPECT_FALSE(all[0].second.passed);
  EXPECT_NE(all[0].second.failure.find("logits differ"), std::string::npos) << all[0].second.failure;

  // The next load keeps to the verdict: straight to the CPU, the same message, no check.
  load_result again = load(s, fault::wrong_numbers);
  ASSERT_TRUE(again.be) << again.error;
  EXPECT_EQ(*again.ops, 0);
  ASSERT_EQ(again.notices.size(), 1u);
  EXPECT_EQ(again.be->describe().find("fakegpu"), std::string::npos);
}

TEST(device_fallback, a_device_error_during_the_check_hands_the_model_to_the_cpu) {
  scratch s;
  load_result r = load(s, fault::device_error);
  ASSERT_TRUE(r.be) << r.error;
  EXPECT_EQ(r.be->describe().find("fakegpu"), std::string::npos);
  ASSERT_EQ(r.notices.size(), 1u);
  EXPECT_NE(r.notices[0].find("CUDA error in gemv"), std::string::npos) << r.notices[0];
}

TEST(device_fallback, out_of_memory_falls_back_and_is_checked_again_next_time) {
  scratch s;
  load_result r = load(s, fault::out_of_memory);
  ASSERT_TRUE(r.be) << r.error;
  EXPECT_EQ(r.be->describe().find("fakegpu"), std::string::npos);
  ASSERT_EQ(r.notices.size(), 1u);
  EXPECT_NE(r.notices[0].find("out of memory"), std::string::npos) << r.notices[0];
  EXPECT_TRUE(all_device_verdicts(s.verdicts).empty()) << "another process may have held the memory";
}

TEST(device_fallback, a_symlink_planted_at_the_verdicts_file_is_not_followed) {
  scratch s;
  fs::create_directories(fs::path(s.verdicts).parent_path());
  const std::string target = (s.dir / "elsewhere.json").string();
  fs::create_symlink(target, s.verdicts);
  load_result r = load(s, fault::none);
  ASSERT_TRUE(r.be) << r.error;
  // The link's target is neither created nor written: the verdict replaces the link itself.
  EXPECT_FALSE(fs::exists(target));
  EXPECT_FALSE(fs::is_symlink(s.verdicts));
  EXPECT_EQ(all_device_verdicts(s.verdicts).size(), 1u);
}
