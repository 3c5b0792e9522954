// The real quickfill server keeps serving when its model file is truncated
// and then rewritten in place (what `cp new.gguf model.gguf` does), and its
// completions stay those of the model it loaded: after the file changes, a
// server that loaded it answers a new document exactly as a second server
// running on an untouched copy does. With the weights mapped from the file
// the first server died of SIGBUS.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "tests/server/cli/served_model.h"
#include "tests/server/cli/tool_runner.h"

namespace qf::test {
namespace {

namespace fs = std::filesystem;

TEST(ModelFileServed, ServerKeepsAnsweringWithItsModelAfterTheFileIsTruncatedAndRewritten) {
  const std::string bundled = source_dir() + "/models/quickfill-tiny-code.gguf";
  if (!fs::exists(bundled)) GTEST_SKIP() << "bundled model absent: " << bundled;
  const std::string dir = scratch_dir("served_model");
  const std::string served = dir + "/served.gguf", reference = dir + "/reference.gguf";
  fs::copy_file(bundled, served);
  fs::copy_file(bundled, reference);

  served_model a, b;
  std::string error;
  ASSERT_TRUE(a.start(served, dir + "/a.log", &error)) << error;
  ASSERT_TRUE(b.start(reference, dir + "/b.log", &error)) << error;

  // Both servers see the same requests in the same order (open documents are
  // part of the prompt), so their answers match while their models do.
  const std::string before = "def add(a, b):\n    return a + b\n\n\ndef fibonacci(n):\n    ";
  const auto a0 = a.complete("file:///work/before.py", before), b0 = b.complete("file:///work/before.py", before);
  ASSERT_TRUE(a0.has_value() && b0.has_value());
  EXPECT_EQ(*a0, *b0);

  // Truncate the served file, then rewrite it in place with other bytes.
  ASSERT_EQ(::truncate(served.c_str(), 0), 0);
  std::string junk(1 << 20, '\0');
  for (size_t i = 0; i < junk.size(); ++i) junk[i] = static_cast<char>(i * 2654435761u >> 13);
  write_file(served, "GGUF" + junk);

  const std::string after = "import os\n\n\ndef list_python_files(root):\n    ";
  const auto got = a.complete("file:///work/after.py", after);
  const auto want = b.complete("file:///work/after.py", after);
  ASSERT_TRUE(got.has_value()) << "the server whose file changed did not answer: " << read_file(dir + "/a.log");
  ASSERT_TRUE(want.has_value());
  EXPECT_FALSE(want->empty()) << "the reference server gave no completion: nothing is compared";
  EXPECT_EQ(*got, *want);

  auto st = a.call("quickfill/status", nullptr);
  ASSERT_TRUE(st.has_value());
  EXPECT_TRUE(st->at("modelLoaded").as_bool());
  EXPECT_EQ(a.stop(), 0);
  EXPECT_EQ(b.stop(), 0);
}

}  // namespace
}  // namespace qf::test
