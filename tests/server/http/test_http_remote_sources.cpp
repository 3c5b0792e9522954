// quickfill's own remote sources pointed at `quickfill serve`: one quickfill
// serving a team's others. The `llama-infill` source (/infill, streamed, with
// input_extra chunks and a slot) and the `openai` source (/v1/completions with
// suffix, streamed with usage) each get candidates from the real server on
// loopback, and a key the server does not hold is refused (401).
#include <filesystem>
#include <fstream>

#include "tests/server/http/http_test_util.h"
#include "tests/server/remote/remote_test_util.h"

using namespace qf::remote;
using namespace qf::remote::testing;
using qf::test::quickfill_serve;

namespace {

const std::string py =
    "import os\nimport sys\n\n\ndef read_lines(path):\n    with open(path) as f:\n        return f.read().splitlines()\n\n\n"
    "def main():\n    lines = read_lines(sys.argv[1])\n    for line in lines:\n        ";
constexpr int64_t py_line = 12, py_col = 8;

class RemoteToServe : public ::testing::Test {
 protected:
  void start(std::vector<std::string> extra = {}) {
    dir_ = qf::http::testing::test_dir("remote");
    server_ = std::make_unique<quickfill_serve>(QUICKFILL_BINARY, QUICKFILL_TINY_MODEL, extra, dir_ + "/serve.log");
    ASSERT_TRUE(server_->ok()) << server_->error();
  }
  void TearDown() override {
    server_.reset();
    if (!dir_.empty()) std::filesystem::remove_all(dir_);
  }
  void expect_candidates(const std::string& source_json) {
    auto s = make_source(source_json);
    ASSERT_TRUE(s);
    auto req = make_request(py, py_line, py_col, 30s, true);
    req.context_docs.push_back({"file:///work/app/util.py", qf::index::shared_text("def helper(x):\n    return x * 2\n")});
    auto o = run(*s, req);
    ASSERT_EQ(o.kind, "") << o.message << "\n" << server_->log();
    EXPECT_GT(o.result.metrics.tokens_generated, 0);
    ASSERT_FALSE(o.result.items.empty()) << "the served text was empty after post-processing";
    EXPECT_FALSE(o.result.items[0].insert_text.empty());
    EXPECT_EQ(s->health().state, "ok");
  }
  std::string dir_;
  std::unique_ptr<quickfill_serve> server_;
};

}  // namespace

TEST_F(RemoteToServe, LlamaInfillSource) {
  start();
  expect_candidates(R"({"kind": "llama-infill", "maxTokens": 24, "slots": 2, "endpoints": [")" + server_->url() + R"("]})");
}

TEST_F(RemoteToServe, OpenAISource) {
  start();
  expect_candidates(R"({"kind": "openai", "model": "quickfill-tiny-code.gguf", "maxTokens": 24, "endpoints": [")" +
                    server_->url() + R"("]})");
}

TEST_F(RemoteToServe, KeyFromFileAndWrongKey) {
  dir_ = qf::http::testing::test_dir("remote_keys");
  std::ofstream(dir_ + "/server_keys") << "team-key-1\n";
  std::ofstream(dir_ + "/client_key") << "team-key-1\n";
  std::ofstream(dir_ + "/wrong_key") << "not-the-key\n";
  server_ = std::make_unique<quickfill_serve>(QUICKFILL_BINARY, QUICKFILL_TINY_MODEL,
                                              std::vector<std::string>{"--api-key-file", dir_ + "/server_keys"},
                                              dir_ + "/serve.log");
  ASSERT_TRUE(server_->ok()) << server_->error();
  expect_candidates(R"({"kind": "llama-infill", "maxTokens": 24, "apiKeyFile": ")" + dir_ + R"(/client_key", "endpoints": [")" +
                    server_->url() + R"("]})");
  auto s = make_source(R"({"kind": "llama-infill", "maxTokens": 16, "retries": 0, "apiKeyFile": ")" + dir_ +
                       R"(/wrong_key", "endpoints": [")" + server_->url() + R"("]})");
  ASSERT_TRUE(s);
  auto o = run(*s, make_request(py, py_line, py_col, 30s, true));
  EXPECT_EQ(o.kind, "refused") << o.message;
  EXPECT_NE(o.message.find("401"), std::string::npos) << o.message;
  EXPECT_EQ(o.message.find("not-the-key"), std::string::npos) << o.message;
}
