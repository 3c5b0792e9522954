// The real quickfill server keeps serving when its model file is truncated
// and then rewritten in place (what `cp new.gguf model.gguf` does), and its
// completions stay those of the model it loaded: after the file changes, a
// server that loaded it answers a new document exactly as a second server
// running on an untouched copy does. With the weights mapped from the file
// the first server died of SIGBUS.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <thread>

#include <boost/json.hpp>

#include "lsp/client/lsp_client.h"
#include "tests/server/cli/tool_runner.h"

namespace qf::test {
namespace {

namespace json = boost::json;
namespace fs = std::filesystem;
using std::chrono::milliseconds;

class served_model {
 public:
  bool start(const std::string& model, const std::string& log, std::string* error) {
    if (!client_.start({QUICKFILL_BIN, "--stdio", "--model", model, "--threads", "1", "--no-background",
                        "--log-level", "debug", "--log-file", log},
                       qf::lsp::client_options{}, error))
      return false;
    // Generous budgets: the answers compared below must not depend on the
    // machine's load.
    const json::object options{{"completion", json::object{{"explicitDeadlineMs", 60000},
                                                             {"autoDeadlineMs", 60000},
                                                             {"maxTokensExplicit", 24},
                                                             {"prefetch", false}}}};
    auto init = call("initialize", json::object{{"processId", nullptr},
                                                {"rootUri", nullptr},
                                                {"capabilities", json::object{}},
                                                {"initializationOptions", options}});
    if (!init) return fail(error, "no answer to initialize");
    client_.send(json::object{{"jsonrpc", "2.0"}, {"method", "initialized"}, {"params", json::object{}}});
    for (int i = 0; i < 600; ++i) {  // the model loads in the background
      auto st = call("quickfill/status", nullptr);
      if (!st) return fail(error, "no answer to quickfill/status");
      if (!st->at("modelLoading").as_bool()) {
        if (st->at("modelLoaded").as_bool()) return true;
        return fail(error, "model not loaded: " + json::serialize(*st));
      }
      std::this_thread::sleep_for(milliseconds(100));
    }
    return fail(error, "the model did not load");
  }

  // The text of the first completion item for `text` opened as `uri`, with the
  // cursor at its end ("" when the list is empty); nullopt without an answer.
  std::optional<std::string> complete(const std::string& uri, const std::string& text) {
    client_.send(json::object{
        {"jsonrpc", "2.0"},
        {"method", "textDocument/didOpen"},
        {"params", json::object{{"textDocument", json::object{{"uri", uri},
                                                              {"languageId", "python"},
                                                              {"version", 1},
                                                              {"text", text}}}}}});
    int64_t line = 0, col = 0;
    for (char ch : text) ch == '\n' ? (++line, col = 0) : ++col;  // ASCII text: bytes = UTF-16 units
    auto r = call("textDocument/completion",
                  json::object{{"textDocument", json::object{{"uri", uri}}},
                               {"position", json::object{{"line", line}, {"character", col}}},
                               {"context", json::object{{"triggerKind", 1}}}});
    if (!r) return std::nullopt;
    const json::array& items = r->at("items").as_array();
    if (items.empty()) return std::string();
    const json::object& it = items[0].as_object();
    if (const auto* te = it.if_contains("textEdit")) return std::string(te->at("newText").as_string());
    return std::string(it.at("insertText").as_string());
  }

  std::optional<json::value> call(const std::string& method, json::value params) {
    const int64_t id = client_.request(method, std::move(params));
    for (;;) {
      auto m = client_.next(milliseconds(120000));
      if (!m) return std::nullopt;
      const json::object& o = m->body.as_object();
      if (o.contains("method")) {  // a notification, or a request to the client
        if (o.contains("id")) client_.send(json::object{{"jsonrpc", "2.0"}, {"id", o.at("id")}, {"result", nullptr}});
        continue;
      }
      if (o.contains("id") && o.at("id").is_int64() && o.at("id").as_int64() == id) {
        if (!o.contains("result")) return std::nullopt;
        return o.at("result");
      }
    }
  }

  // Shuts down; returns the exit code (negative: killed by that signal).
  int stop() {
    call("shutdown", nullptr);
    client_.send(json::object{{"jsonrpc", "2.0"}, {"method", "exit"}});
    bool timed_out = false;
    return client_.wait_exit(milliseconds(60000), &timed_out);
  }
  pid_t pid() const { return client_.pid(); }

 private:
  static bool fail(std::string* error, const std::string& what) {
    *error = what;
    return false;
  }
  qf::lsp::lsp_client client_;
};

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
