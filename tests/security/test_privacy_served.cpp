// Privacy end to end through the real `quickfill --stdio`: a
// `.env` with a secret and a file matching a pattern the editor added are
// open next to ordinary files; completions are asked in an ordinary file,
// answered by a remote `llama-infill` source played by a recording HTTP server
// on loopback, with the audit log on (both from the user config file in a
// temporary XDG_CONFIG_HOME), and explained by a local source (the bundled
// model). The secrets appear in no request the server received, no audit
// line and no explanation; the private documents get empty answers and cause
// no request at all; files are named relative to the workspace folder. The
// same scenario runs through a daemon (the default mode) of a private socket
// folder.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <boost/json.hpp>

#include "indexing/file_uri.h"
#include "tests/recording_http_server.h"
#include "tests/server/cli/served_model.h"

namespace qf::test {
namespace {

namespace fs = std::filesystem;

const std::string bundled = std::string(QUICKFILL_SOURCE_DIR) + "/models/quickfill-tiny-code.gguf";
const std::string env_secret = "sk-live-ENVSECRET0123456789";
const std::string conf_secret = "CONFSECRET-hunter2";

std::string read_file(const std::string& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

class PrivacyServed : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const char* v : {"XDG_CONFIG_HOME", "QUICKFILL_NO_DAEMON"})
      if (const char* old = std::getenv(v)) saved_env_.emplace_back(v, old);
    if (!fs::exists(bundled)) GTEST_SKIP() << "no bundled model";
    dir_ = fs::temp_directory_path() / ("qf-privacy-served-" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "config" / "quickfill");
    fs::create_directories(dir_ / "proj" / "lib");
    dir_ = fs::canonical(dir_);
    ASSERT_TRUE(http_.ok()) << http_.error();
    canned_response r;
    r.headers.push_back({"Content-Type", "text/event-stream"});
    r.body = "data: {\"content\":\"42\",\"stop\":false}\n\ndata: {\"content\":\"\",\"stop\":true}\n\n";
    http_.answer("/infill", r);
    audit_ = (dir_ / "audit.jsonl").string();
    // The user config file: sources and the audit log are privileged, so they come from here.
    json::object user{
        {"sources",
         json::array{json::object{{"name", "remote"}, {"kind", "llama-infill"}, {"endpoints", json::array{http_.origin()}},
                                  {"retries", 0}, {"readTimeoutMs", 20000}},
                     json::object{{"name", "tiny"}, {"kind", "local"}, {"model", bundled}}}},
        {"routes", json::object{{"automatic", json::array{"remote"}}, {"explicit", json::array{"remote", "tiny"}}}},
        {"routing", json::object{{"memoryReserveMiB", 0}}},
        {"audit", json::object{{"path", audit_}, {"includeCode", true}}}};
    const std::string cfg = (dir_ / "config" / "quickfill" / "config.json").string();
    std::ofstream(cfg) << json::serialize(json::object{{"quickfill", user}});
    ::chmod(cfg.c_str(), 0600);
    ::setenv("XDG_CONFIG_HOME", (dir_ / "config").c_str(), 1);
    ::setenv("QUICKFILL_NO_DAEMON", "1", 1);
  }
  void TearDown() override {
    // The environment as it was (other tests of this executable may run in this process next).
    ::unsetenv("XDG_CONFIG_HOME");
    ::unsetenv("QUICKFILL_NO_DAEMON");
    for (const auto& [k, v] : saved_env_) ::setenv(k.c_str(), v.c_str(), 1);
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  std::string uri(const std::string& rel) const { return index::path_to_file_uri((dir_ / "proj" / rel).string()); }
  void secrets_stay_out(bool through_daemon);

  fs::path dir_;
  std::vector<std::pair<std::string, std::string>> saved_env_;
  recording_http_server http_;
  std::string audit_;
};

class served : public served_model {
 public:
  void open(const std::string& uri, const std::string& lang, const std::string& text) {
    notify("textDocument/didOpen", json::object{{"textDocument", json::object{{"uri", uri}, {"languageId", lang},
                                                                             {"version", 1}, {"text", text}}}});
  }
  std::optional<json::value> at(const std::string& method, const std::string& uri, int line, int col) {
    return call(method, json::object{{"textDocument", json::object{{"uri", uri}}},
                                     {"position", json::object{{"line", line}, {"character", col}}},
                                     {"context", json::object{{"triggerKind", 1}}}});
  }
};

// The scenario, in-process or through a daemon (`through_daemon`: a bridge in
// front of a daemon of a private socket folder, which exits when idle).
void PrivacyServed::secrets_stay_out(bool through_daemon) {
  served s;
  std::string error;
  // The editor adds a pattern (a repository may exclude more, never less).
  json::object options{{"privacy", json::object{{"exclude", json::array{"*.secretconf"}}}},
                       {"completion", json::object{{"explicitDeadlineMs", 60000}, {"autoDeadlineMs", 60000},
                                                   {"maxTokensExplicit", 4}, {"prefetch", false}}}};
  std::vector<std::string> args;
  std::string log = (dir_ / "server.log").string(), session_log = log;
  if (through_daemon) {
    ::unsetenv("QUICKFILL_NO_DAEMON");
    options["daemon"] = json::object{{"idleTimeoutSeconds", 2}};  // exits soon after the test
    args = {"--socket-dir", (dir_ / "sock").string()};
    session_log = (dir_ / "sock" / "daemon.log").string();
  }
  ASSERT_TRUE(s.start_with(args, options, log, &error, /*require_model=*/false)) << error;
  if (through_daemon) {  // the session really is the daemon's (no fallback to in-process)
    auto st = s.call("quickfill/status", nullptr);
    ASSERT_TRUE(st);
    ASSERT_FALSE(st->at("daemon").is_null()) << json::serialize(*st);
  }
  s.notify("workspace/didChangeWorkspaceFolders",
           json::object{{"event", json::object{{"added", json::array{json::object{
                                                    {"uri", index::path_to_file_uri((dir_ / "proj").string())},
                                                    {"name", "proj"}}}},
                                               {"removed", json::array{}}}}});
  s.open(uri(".env"), "dotenv", "API_KEY=" + env_secret + "\n");
  s.open(uri("app.secretconf"), "ini", "password = " + conf_secret + "\n");
  s.open(uri("lib/util.py"), "python", "def util_helper(a):\n    return a * 2\n");
  s.open(uri("app.py"), "python", "import os\n\nvalue = ");
  // An edit of the .env: the edit history and recent chunks must not keep it either.
  s.notify("textDocument/didChange",
           json::object{{"textDocument", json::object{{"uri", uri(".env")}, {"version", 2}}},
                        {"contentChanges", json::array{json::object{{"text", "API_KEY=" + env_secret + "\nOTHER=" +
                                                                                 env_secret + "\n"}}}}});

  // The private documents: empty answers, no request anywhere.
  auto env_answer = s.at("textDocument/completion", uri(".env"), 1, 0);
  ASSERT_TRUE(env_answer);
  EXPECT_TRUE(env_answer->at("items").as_array().empty()) << json::serialize(*env_answer);
  auto conf_answer = s.at("textDocument/completion", uri("app.secretconf"), 0, 5);
  ASSERT_TRUE(conf_answer);
  EXPECT_TRUE(conf_answer->at("items").as_array().empty());
  EXPECT_TRUE(http_.requests().empty());
  EXPECT_FALSE(s.at("quickfill/explainCompletion", uri(".env"), 0, 3));  // an error: no prompt to explain

  // The ordinary file: the remote source answers.
  auto answer = s.at("textDocument/completion", uri("app.py"), 2, 8);
  ASSERT_TRUE(answer);
  ASSERT_FALSE(answer->at("items").as_array().empty()) << json::serialize(*answer);
  EXPECT_EQ(answer->at("items").as_array()[0].at("textEdit").at("newText").as_string(), "42");
  const auto reqs = http_.wait_for(1);
  ASSERT_EQ(reqs.size(), 1u);
  const std::string body = reqs[0].body;
  EXPECT_FALSE(body.find(env_secret) != std::string::npos) << body;
  EXPECT_FALSE(body.find(conf_secret) != std::string::npos) << body;
  EXPECT_FALSE(body.find(dir_.string()) != std::string::npos) << body;  // no absolute path
  const json::value sent = json::parse(body);
  EXPECT_EQ(sent.at("input_prefix").as_string(), "import os\n\nvalue = ");
  bool util_sent = false;
  for (const auto& c : sent.at("input_extra").as_array()) {
    EXPECT_NE(c.at("filename").as_string(), ".env");
    if (c.at("filename").as_string() == "lib/util.py") util_sent = true;
  }
  EXPECT_TRUE(util_sent) << body;  // context of ordinary files is sent, named inside the workspace

  // The explanation (local source) has the ordinary context and no secret.
  auto explained = s.at("quickfill/explainCompletion", uri("app.py"), 2, 8);
  ASSERT_TRUE(explained);
  const std::string e = json::serialize(*explained);
  EXPECT_NE(e.find("util_helper"), std::string::npos) << e;
  EXPECT_EQ(e.find(env_secret), std::string::npos) << e;
  EXPECT_EQ(e.find(conf_secret), std::string::npos) << e;
  EXPECT_EQ(e.find(".env"), std::string::npos) << e;

  EXPECT_EQ(s.stop(), 0);
  // The audit log: one line for the remote call, with its code (includeCode), no secret.
  const std::string audit = read_file(audit_);
  EXPECT_NE(audit.find("value = "), std::string::npos) << audit;
  EXPECT_EQ(audit.find(env_secret), std::string::npos) << audit;
  EXPECT_EQ(audit.find(conf_secret), std::string::npos) << audit;
  EXPECT_EQ(http_.requests().size(), 1u);
  // Nor did the server's own log write the secret.
  const std::string server_log = read_file(log) + read_file(session_log);
  EXPECT_EQ(server_log.find(env_secret), std::string::npos);
  EXPECT_NE(server_log.find("kept out of completions and prompts"), std::string::npos) << session_log;
}

TEST_F(PrivacyServed, SecretsReachNoRequestNoAuditLineAndNoExplanation) { secrets_stay_out(false); }

TEST_F(PrivacyServed, SecretsStayOutThroughTheDaemonToo) { secrets_stay_out(true); }

TEST_F(PrivacyServed, TheEditorCannotRemoveTheDefaultExclusions) {
  served s;
  std::string error;
  // An empty list and junk from the (possibly repository-controlled) editor settings.
  json::object options{{"privacy", json::object{{"exclude", json::array{}}, {"disabledLanguages", "none"}}},
                       {"completion", json::object{{"explicitDeadlineMs", 60000}, {"autoDeadlineMs", 60000}}}};
  ASSERT_TRUE(s.start_with({}, options, (dir_ / "server2.log").string(), &error, false)) << error;
  s.open(uri(".env"), "dotenv", "API_KEY=" + env_secret + "\n");
  auto a = s.at("textDocument/completion", uri(".env"), 0, 8);
  ASSERT_TRUE(a);
  EXPECT_TRUE(a->at("items").as_array().empty());
  s.notify("workspace/didChangeConfiguration",
           json::object{{"settings", json::object{{"quickfill", json::object{{"privacy.exclude", json::array{"!.env"}}}}}}});
  a = s.at("textDocument/completion", uri(".env"), 0, 8);
  ASSERT_TRUE(a);
  EXPECT_TRUE(a->at("items").as_array().empty());
  EXPECT_TRUE(http_.requests().empty());
  EXPECT_EQ(s.stop(), 0);
}

}  // namespace
}  // namespace qf::test
