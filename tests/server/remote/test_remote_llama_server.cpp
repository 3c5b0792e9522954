// The remote source against a real llama-server (built by
// scripts/build_llama_server.sh) serving the bundled tiny model on
// 127.0.0.1: /infill and /v1/completions both give candidates; HTTPS through
// nginx as a TLS reverse proxy with a self-signed certificate; a wrong key is
// refused and no key ever appears in errors, health or logs; a cancelled
// request frees the server's slot; and the source serves server_core through
// a provider factory like the router will.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <future>
#include <thread>

#include "server/core/server_core.h"
#include "tests/llama_server.h"
#include "tests/nginx_server.h"
#include "tests/server/remote/remote_test_util.h"

using namespace qf::remote;
using namespace qf::remote::testing;
using qf::test::llama_server;
using qf::test::nginx_server;

namespace {

const std::string py =
    "import os\nimport sys\n\n\ndef read_lines(path):\n    with open(path) as f:\n        return f.read().splitlines()\n\n\n"
    "def main():\n    lines = read_lines(sys.argv[1])\n    for line in lines:\n        ";
constexpr int64_t py_line = 12, py_col = 8;

std::string temp_dir(const std::string& tag) {
  const auto d = std::filesystem::temp_directory_path() /
                 ("qf_remote_" + tag + "_" + std::to_string(::getpid()) + "_" +
                  ::testing::UnitTest::GetInstance()->current_test_info()->name());
  std::filesystem::remove_all(d);
  std::filesystem::create_directories(d);
  return d.string();
}

class RemoteLlamaServer : public ::testing::Test {
 protected:
  // A skip inside start() would only leave start(); here it skips the test.
  void SetUp() override {
    if (llama_server::binary().empty()) GTEST_SKIP() << llama_server::skip_reason();
  }
  void start(std::vector<std::string> extra = {}) {
    if (llama_server::binary().empty()) GTEST_SKIP() << llama_server::skip_reason();
    dir_ = temp_dir("llama");
    std::vector<std::string> args{"-c", "1024", "-np", "2", "-t", "1", "--no-warmup"};
    args.insert(args.end(), extra.begin(), extra.end());
    server_ = std::make_unique<llama_server>(QUICKFILL_TINY_MODEL, args, dir_ + "/llama-server.log");
    ASSERT_TRUE(server_->ok()) << server_->error();
  }
  void TearDown() override {
    server_.reset();
    if (!dir_.empty()) std::filesystem::remove_all(dir_);
  }
  std::string dir_;
  std::unique_ptr<llama_server> server_;
};

}  // namespace

TEST_F(RemoteLlamaServer, InfillGivesCandidates) {
  start();
  auto s = make_source(R"({"kind": "llama-infill", "maxTokens": 24, "slots": 2, "endpoints": [")" + server_->url() +
                       R"("]})");
  auto req = make_request(py, py_line, py_col, 20s, true);
  req.context_docs.push_back({"file:///work/app/util.py", qf::index::shared_text("def helper(x):\n    return x * 2\n")});
  auto o = run(*s, req);
  ASSERT_EQ(o.kind, "") << o.message << "\n" << server_->log();
  ASSERT_FALSE(o.result.items.empty()) << "the model's text was empty after post-processing";
  EXPECT_FALSE(o.result.items[0].insert_text.empty());
  EXPECT_GT(o.result.metrics.tokens_generated, 0);
  EXPECT_GT(o.result.metrics.ttft_ms, 0);
  EXPECT_EQ(s->health().state, "ok");
  // The same document again: the server's prompt cache holds its prefix.
  auto again = run(*s, make_request(py, py_line, py_col, 20s, true));
  ASSERT_EQ(again.kind, "") << again.message;
  EXPECT_EQ(again.result.items.size(), o.result.items.size());
}

TEST_F(RemoteLlamaServer, OpenAiCompletionsGiveCandidates) {
  start();
  auto s = make_source(R"({"kind": "openai", "model": "tiny", "maxTokens": 24, "fimTemplate": "starcoder",
                           "endpoints": [")" + server_->url() + R"("]})");
  auto o = run(*s, make_request(py, py_line, py_col, 20s, true));
  ASSERT_EQ(o.kind, "") << o.message << "\n" << server_->log();
  ASSERT_FALSE(o.result.items.empty());
  EXPECT_FALSE(o.result.items[0].insert_text.empty());
  EXPECT_GT(o.result.metrics.tokens_generated, 0);
}

TEST_F(RemoteLlamaServer, OpenAiPromptAndSuffixGiveCandidates) {
  start();
  // Without a fimTemplate: "prompt" + "suffix", as vLLM, SGLang and TGI take them.
  auto s = make_source(R"({"kind": "openai", "maxTokens": 24, "endpoints": [")" + server_->url() + R"("]})");
  auto o = run(*s, make_request(py, py_line, py_col, 20s, true));
  ASSERT_EQ(o.kind, "") << o.message;
  EXPECT_GT(o.result.metrics.tokens_generated, 0);
}

TEST_F(RemoteLlamaServer, AWrongKeyIsRefusedAndNoKeyIsEverShown) {
  const std::string right = "qf-right-key-7c1d2e3f", wrong = "qf-wrong-key-0a9b8c7d";
  start({"--api-key", right});
  const std::string key_file = dir_ + "/key";
  std::ofstream(key_file) << wrong << "\n";
  log_capture logs;
  auto s = make_source(R"({"kind": "llama-infill", "apiKeyFile": ")" + key_file + R"(", "endpoints": [")" +
                       server_->url() + R"("]})");
  auto o = run(*s, make_request(py, py_line, py_col, 20s, true));
  EXPECT_EQ(o.kind, "refused") << o.message;
  EXPECT_NE(o.message.find("401"), std::string::npos) << o.message;
  EXPECT_NE(o.message.find("API key"), std::string::npos) << o.message;
  for (const std::string& shown : {o.message, s->health().detail, s->describe(), logs.text()}) {
    EXPECT_EQ(shown.find(wrong), std::string::npos) << shown;
    EXPECT_EQ(shown.find(right), std::string::npos) << shown;
  }
  // With the right key, from an environment variable, it answers.
  ::setenv("QF_TEST_LLAMA_KEY", right.c_str(), 1);
  auto ok = make_source(R"({"kind": "llama-infill", "apiKeyEnv": "QF_TEST_LLAMA_KEY", "endpoints": [")" +
                        server_->url() + R"("]})");
  auto answered = run(*ok, make_request(py, py_line, py_col, 20s, true));
  EXPECT_EQ(answered.kind, "") << answered.message;
  EXPECT_EQ(logs.text().find(right), std::string::npos);
  ::unsetenv("QF_TEST_LLAMA_KEY");
}

TEST_F(RemoteLlamaServer, HttpsThroughATlsProxyWithASelfSignedCertificate) {
  if (nginx_server::binary().empty()) GTEST_SKIP() << "nginx is not installed";
  if (std::system("command -v openssl >/dev/null 2>&1") != 0) GTEST_SKIP() << "the openssl tool is not installed";
  start();
  const std::string tls = temp_dir("tls");
  const std::string cert = tls + "/cert.pem", key = tls + "/key.pem";
  const std::string cmd = "openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=127.0.0.1 "
                          "-addext subjectAltName=IP:127.0.0.1 -keyout " + key + " -out " + cert + " >/dev/null 2>&1";
  ASSERT_EQ(std::system(cmd.c_str()), 0);
  nginx_server proxy(tls + "/nginx",
                     "    location / { proxy_pass " + server_->url() +
                         "; proxy_http_version 1.1; proxy_buffering off; proxy_read_timeout 60s; }\n",
                     0, cert, key);
  ASSERT_TRUE(proxy.ok()) << proxy.error();
  const std::string https = "https://127.0.0.1:" + std::to_string(proxy.port());
  auto trusted = make_source(R"({"kind": "llama-infill", "caFile": ")" + cert + R"(", "endpoints": [")" + https + R"("]})");
  auto o = run(*trusted, make_request(py, py_line, py_col, 20s, true));
  ASSERT_EQ(o.kind, "") << o.message;
  EXPECT_FALSE(o.result.items.empty());
  // Without the CA file the certificate is not trusted: verification is on by default.
  auto untrusted = make_source(R"({"kind": "llama-infill", "retries": 0, "endpoints": [")" + https + R"("]})");
  o = run(*untrusted, make_request(py, py_line, py_col, 20s, true));
  EXPECT_EQ(o.kind, "unavailable");
  EXPECT_NE(o.message.find("certificate verification failed"), std::string::npos) << o.message;
  std::filesystem::remove_all(tls);
}

TEST_F(RemoteLlamaServer, CancellingFreesTheServersSlot) {
  // Fixed-length generation (no stop rules, no end-of-text, room for every token) keeps the slot busy.
  start({"--ignore-eos", "-c", "16384"});
  auto s = make_source(R"({"kind": "llama-infill", "maxTokens": 4000, "temperature": 1.5, "endpoints": [")" +
                       server_->url() + R"("]})");
  qf::server::completion::completion_settings cs;
  cs.stop_rules = false;
  s->configure(cs);
  qf::cancel_source cancel;
  auto req = make_request(py, py_line, py_col, 60s, true);
  auto fut = std::async(std::launch::async, [&] { return run(*s, req, cancel.token()); });
  // Wait until the server is generating for us, then cancel.
  bool busy = false;
  for (int i = 0; i < 1000 && !busy; ++i) {
    busy = server_->get("/slots").find("\"is_processing\":true") != std::string::npos;
    if (!busy) std::this_thread::sleep_for(2ms);
    if (fut.wait_for(0s) == std::future_status::ready) break;
  }
  cancel.cancel(qf::cancel_reason::content_modified);
  const outcome o = fut.get();
  EXPECT_EQ(o.kind, "") << o.message;
  // Text back means the generation ended on its own before the cancel reached it (a loaded machine).
  if (!busy || !o.result.items.empty()) GTEST_SKIP() << "the generation finished before it could be cancelled";
  // The closed connection stops the generation: the slot becomes free.
  bool freed = false;
  for (int i = 0; i < 500 && !freed; ++i) {
    freed = server_->get("/slots").find("\"is_processing\":true") == std::string::npos;
    if (!freed) std::this_thread::sleep_for(10ms);
  }
  EXPECT_TRUE(freed) << server_->get("/slots");
}

TEST_F(RemoteLlamaServer, ServesServerCoreThroughAProviderFactory) {
  start();
  std::string err;
  auto opts = parse_remote_source(
      boost::json::parse(R"({"name": "box", "kind": "llama-infill", "maxTokens": 24, "endpoints": [")" +
                         server_->url() + R"("]})")
          .as_object(),
      &err);
  ASSERT_TRUE(opts) << err;
  qf::server::core_options co;
  co.background = false;
  co.cli_model_path = QUICKFILL_TINY_MODEL;  // a model path must be chosen; the factory ignores it
  co.factory = [&](const qf::server::provider_options& po, std::string* error) {
    auto p = make_remote_source(*opts, error);
    if (p) p->configure(po.completion);
    return p;
  };
  qf::server::server_core core(std::move(co), [](std::function<void()> fn) { fn(); });
  core.start();
  std::promise<qf::server::model_state> loaded;
  core.load_model(nullptr, [&](const qf::server::model_state& st) { loaded.set_value(st); });
  const auto st = loaded.get_future().get();
  ASSERT_TRUE(st.loaded) << st.error;
  EXPECT_NE(st.description.find("remote llama-infill 'box'"), std::string::npos) << st.description;
  ASSERT_TRUE(core.open("file:///work/app/main.py", "python", 1, py, &err)) << err;
  auto req = make_request(py, py_line, py_col, 20s, true);
  req.text = qf::index::shared_text(core.documents().get("file:///work/app/main.py"));
  core.add_context(req);
  std::promise<qf::server::server_core::completion_outcome> done;
  std::atomic<bool> answered{false};
  core.complete(
      "k1", req,
      [&](qf::server::server_core::completion_outcome out) {
        if (!answered.exchange(true)) done.set_value(std::move(out));
      },
      [&](qf::cancel_reason why) {
        qf::server::server_core::completion_outcome out;
        out.failed = true;
        out.error = "cancelled (" + std::to_string(static_cast<int>(why)) + ")";
        if (!answered.exchange(true)) done.set_value(std::move(out));
      });
  const auto out = done.get_future().get();
  EXPECT_FALSE(out.failed) << out.error;
  EXPECT_FALSE(out.no_model);
  EXPECT_FALSE(out.result.items.empty());
  core.stop();
}
