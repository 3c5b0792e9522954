// API keys come from an environment variable or a file, never from the
// settings, and never appear in messages.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "server/remote/api_key.h"
#include <unistd.h>

using qf::remote::api_key_source;
using qf::remote::load_api_key;
using qf::remote::scrub;

TEST(ApiKey, FromAnEnvironmentVariable) {
  ::setenv("QF_TEST_REMOTE_KEY", "  sk-test-123456\n", 1);
  std::string err;
  auto k = load_api_key({"QF_TEST_REMOTE_KEY", ""}, &err);
  ASSERT_TRUE(k) << err;
  EXPECT_EQ(*k, "sk-test-123456");
  ::unsetenv("QF_TEST_REMOTE_KEY");
  EXPECT_FALSE(load_api_key({"QF_TEST_REMOTE_KEY", ""}, &err));
  EXPECT_NE(err.find("QF_TEST_REMOTE_KEY"), std::string::npos);
  EXPECT_NE(err.find("not set"), std::string::npos);
}

TEST(ApiKey, FromAFileWithItsLineEndDropped) {
  const auto dir = std::filesystem::temp_directory_path() / ("qf_key_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string path = (dir / "key").string();
  std::ofstream(path) << "file-key-abcdef\r\n";
  std::string err;
  auto k = load_api_key({"", path}, &err);
  ASSERT_TRUE(k) << err;
  EXPECT_EQ(*k, "file-key-abcdef");
  std::ofstream(path, std::ios::trunc) << "two\nlines-of-key\n";
  EXPECT_FALSE(load_api_key({"", path}, &err));
  EXPECT_EQ(err.find("lines-of-key"), std::string::npos) << err;
  std::ofstream(path, std::ios::trunc) << "\n";
  EXPECT_FALSE(load_api_key({"", path}, &err));
  EXPECT_NE(err.find("empty"), std::string::npos);
  EXPECT_FALSE(load_api_key({"", (dir / "missing").string()}, &err));
  EXPECT_NE(err.find("cannot read"), std::string::npos);
  std::filesystem::remove_all(dir);
}

TEST(ApiKey, NoSourceMeansNoKey) {
  std::string err;
  auto k = load_api_key({}, &err);
  ASSERT_TRUE(k);
  EXPECT_TRUE(k->empty());
}

TEST(ApiKey, ScrubReplacesEveryOccurrence) {
  const std::string key = "sk-live-SECRET42";
  const std::string msg = "401 for Bearer sk-live-SECRET42; header was sk-live-SECRET42.";
  const std::string s = scrub(msg, key);
  EXPECT_EQ(s.find(key), std::string::npos);
  EXPECT_EQ(s, "401 for Bearer [redacted]; header was [redacted].");
  EXPECT_EQ(scrub("nothing here", key), "nothing here");
  EXPECT_EQ(scrub("abc", ""), "abc");
}
