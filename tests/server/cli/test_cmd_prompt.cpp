// `quickfill prompt` through the real binary and the bundled model: the JSON
// parts add up to the prompt, the other open files appear as file parts, the
// column counts UTF-16 code units, and bad input is refused with a message.
#include <gtest/gtest.h>

#include <filesystem>

#include <boost/json.hpp>

#include "tests/server/cli/tool_runner.h"

namespace qf::test {
namespace {

namespace json = boost::json;

class PromptCommand : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = scratch_dir("prompt");
    main_ = dir_ + "/main.py";
    util_ = dir_ + "/util.py";
    write_file(main_, "from util import helper\n\ndef main():\n    s = '\xC3\xA9\xF0\x9D\x84\x9E' + helper()\n    return s\n");
    write_file(util_, "def helper():\n    return 'util'\n");
  }
  std::string uri(const std::string& path) const {
    return "file://" + std::filesystem::absolute(path).lexically_normal().string();
  }
  std::string dir_, main_, util_;
};

TEST_F(PromptCommand, JsonPartsAddUpAndShowTheOpenFile) {
  // Line 3, column 12 in UTF-16 units: after "    s = '" (9), e-acute (1) and U+1D11E (2 units).
  const run_result r = run_quickfill({"prompt", main_, "3", "12", "--open", util_, "--workspace", dir_, "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json::object e = json::parse(r.out).as_object();
  const std::string prompt(e.at("prompt").as_string());
  std::string joined;
  int64_t tokens = 0;
  bool util_part = false, prefix_part = false;
  for (const json::value& v : e.at("parts").as_array()) {
    const json::object& p = v.as_object();
    const std::string kind(p.at("kind").as_string()), origin(p.at("origin").as_string()), text(p.at("text").as_string());
    joined += text;
    tokens += p.at("tokens").as_int64();
    EXPECT_GT(p.at("tokens").as_int64(), 0) << kind;
    if (kind == "file" && origin == uri(util_)) {
      util_part = true;
      EXPECT_NE(text.find("def helper():"), std::string::npos) << text;
    }
    if (kind == "prefix") {
      prefix_part = true;
      EXPECT_EQ(origin.substr(0, origin.rfind(':')), uri(main_)) << origin;
      EXPECT_NE(text.find("def main():"), std::string::npos) << text;
    }
  }
  EXPECT_TRUE(util_part) << r.out;
  EXPECT_TRUE(prefix_part) << r.out;
  EXPECT_EQ(joined, prompt);
  EXPECT_EQ(tokens, e.at("tokens").as_int64());
  // The prompt ends at the cursor: the middle holds the cursor line up to it.
  EXPECT_TRUE(prompt.ends_with("    s = '\xC3\xA9\xF0\x9D\x84\x9E")) << prompt;
  EXPECT_FALSE(std::string(e.at("format").as_string()).empty());
}

TEST_F(PromptCommand, TableListsThePromptAndItsParts) {
  const run_result r = run_quickfill({"prompt", main_, "2", "0", "--open=" + util_});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("----- prompt ("), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("def helper():\n    return 'util'\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("----- end of prompt -----"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("prefix "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(uri(util_)), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("totals:"), std::string::npos) << r.out;
}

TEST_F(PromptCommand, BadInputIsRefusedWithAMessage) {
  run_result r = run_quickfill({"prompt", dir_ + "/missing.py", "0", "0"});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("no such file"), std::string::npos) << r.err;
  r = run_quickfill({"prompt", main_, "5", "0"});  // the file has lines 0..5 (5 is the empty last one)
  EXPECT_EQ(r.exit_code, 0) << r.err;
  r = run_quickfill({"prompt", main_, "6", "0"});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("past the end"), std::string::npos) << r.err;
  r = run_quickfill({"prompt", main_, "0", "24"});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("past the end of line 0"), std::string::npos) << r.err;
  const std::string bin = dir_ + "/blob.py";
  write_file(bin, std::string("x = 1\n\0\x01\x02", 9));
  r = run_quickfill({"prompt", bin, "0", "0"});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("binary"), std::string::npos) << r.err;
  r = run_quickfill({"prompt", main_, "0", "0", "--open", dir_ + "/gone.py"});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("gone.py"), std::string::npos) << r.err;
  r = run_quickfill({"prompt", main_, "0", "0", "--model", dir_ + "/none.gguf"});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("none.gguf"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace qf::test
