// The memory math of a further local model (docs/routing.md, "Memory").
#include <gtest/gtest.h>

#include <filesystem>

#include "server/routing/memory_fit.h"

namespace qf::server::routing {
namespace {

constexpr std::uint64_t MiB = 1024 * 1024;

TEST(MemoryFit, KvBytesPerTokenFollowTheModelShape) {
  // Qwen2.5-Coder-0.5B: 24 layers, 2 KV heads of 64: 12 KiB per token in F16.
  completion::completion_settings cache;  // 256 MiB, 3 slots x 2048 tokens
  model_footprint f = kv_footprint(400 * MiB, 24, 2, 64, 32768, cache);
  EXPECT_EQ(f.kv_bytes_per_token, 12288u);
  EXPECT_EQ(f.kv_tokens, 3u * 2048u);  // the slots are the smaller bound here
  EXPECT_EQ(f.kv_bytes, 6144u * 12288u);
  EXPECT_EQ(f.total(), 400 * MiB + 72 * MiB);
}

TEST(MemoryFit, TheCacheBudgetAndTheTrainingContextBoundTheKv) {
  completion::completion_settings cache;
  cache.cache_mib = 16;
  model_footprint f = kv_footprint(0, 24, 2, 64, 32768, cache);
  EXPECT_EQ(f.kv_tokens, 16 * MiB / 12288);  // the budget is the smaller bound
  cache.cache_mib = 1 << 20;
  model_footprint g = kv_footprint(0, 24, 2, 64, 512, cache);
  EXPECT_EQ(g.kv_tokens, 3u * 512u);  // contextTokens capped by the model's context
}

TEST(MemoryFit, MemAvailableIsReadInKib) {
  EXPECT_EQ(parse_mem_available("MemTotal:       24000000 kB\nMemFree:  1000 kB\nMemAvailable:   2048 kB\n"),
            2048u * 1024u);
  EXPECT_FALSE(parse_mem_available("MemTotal: 1 kB\n").has_value());
  EXPECT_FALSE(parse_mem_available("MemAvailable: lots\n").has_value());
  ASSERT_TRUE(mem_available().has_value()) << "/proc/meminfo has MemAvailable on Linux";
  EXPECT_GT(*mem_available(), 0u);
}

TEST(MemoryFit, AModelThatDoesNotFitIsRefusedWithTheNumbers) {
  model_footprint f;
  f.weights_bytes = 300 * MiB;
  f.kv_bytes = 100 * MiB;
  f.kv_tokens = 1000;
  f.kv_bytes_per_token = 100 * MiB / 1000;
  fit_verdict ok = check_fit("big", f, 1024 * MiB, std::nullopt, false, 512 * MiB);
  EXPECT_TRUE(ok.fits) << ok.message;  // 300 + 100 + 512 <= 1024
  fit_verdict no = check_fit("big", f, 900 * MiB, std::nullopt, false, 512 * MiB);
  EXPECT_FALSE(no.fits);
  EXPECT_NE(no.message.find("source \"big\" was not loaded"), std::string::npos) << no.message;
  EXPECT_NE(no.message.find("912.0 MiB"), std::string::npos) << no.message;
  EXPECT_NE(no.message.find("only 900.0 MiB of memory is available (MemAvailable)"), std::string::npos) << no.message;
  // On CUDA the GPU's free memory must hold it too; off CUDA it is not asked.
  fit_verdict gpu = check_fit("big", f, 64 * 1024 * MiB, 800 * MiB, true, 512 * MiB);
  EXPECT_FALSE(gpu.fits);
  EXPECT_NE(gpu.message.find("on the GPU, but only 800.0 MiB is free"), std::string::npos) << gpu.message;
  EXPECT_TRUE(check_fit("big", f, 64 * 1024 * MiB, 800 * MiB, false, 512 * MiB).fits);
  EXPECT_TRUE(check_fit("big", f, 64 * 1024 * MiB, std::nullopt, true, 512 * MiB).fits);  // unknown: not checked
}

TEST(MemoryFit, TheBundledModelsFootprintComesFromItsHeader) {
  const std::string path = std::string(QUICKFILL_SOURCE_DIR) + "/models/quickfill-tiny-code.gguf";
  if (!std::filesystem::exists(path)) GTEST_SKIP() << "no bundled model";
  completion::completion_settings cache;
  std::string error;
  auto f = estimate_footprint(path, cache, &error);
  ASSERT_TRUE(f) << error;
  EXPECT_EQ(f->weights_bytes, std::filesystem::file_size(path));
  EXPECT_GT(f->kv_bytes_per_token, 0u);
  EXPECT_EQ(f->kv_bytes_per_token % 4, 0u);  // K and V, two bytes each
  EXPECT_GT(f->kv_tokens, 0u);
  EXPECT_FALSE(estimate_footprint("/nonexistent.gguf", cache, &error));
  EXPECT_NE(error.find("/nonexistent.gguf"), std::string::npos);
}

}  // namespace
}  // namespace qf::server::routing
