// A cloned repository cannot steer quickfill through the editor's settings
// (docs/security.md). The hostile repository (hostile_repo/) is copied to a
// temporary folder; its .vscode/settings.json `quickfill.server` object is
// sent by a client that forwards it unfiltered (what eglot does with a
// .dir-locals.el), as initializationOptions and again as
// workspace/didChangeConfiguration, to the real `quickfill --stdio`, in this
// process and through the daemon. It names a remote source on a loopback
// port where a real listening socket records every connection, an API key
// from the environment, an audit log on a file of the user's, and a model
// file planted in the repository (a copy of a real model, so it would load).
// Nothing of it may be taken, and the user is told which keys were ignored.
// The same source in the user config file is used (the recorder then gets
// the request with the key): the recorder and the route do work. The
// repository's .env is open in the editor all along: its secrets reach no
// request, no audit line, no explanation and no log.
#include <gtest/gtest.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <boost/json.hpp>

#include "tests/server/cli/served_model.h"

namespace qf::test {
namespace {

namespace json = boost::json;
namespace fs = std::filesystem;

const std::string source_dir = QUICKFILL_SOURCE_DIR;
const std::string bundled = source_dir + "/models/quickfill-tiny-code.gguf";

std::string read_text(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// A TCP listener on 127.0.0.1 that records what each connection sends and
// answers 500 (so that a client that did connect is not left waiting).
class recording_listener {
 public:
  recording_listener() {
    fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    ::bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a);
    ::listen(fd_, 16);
    ::getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len);
    port_ = ntohs(a.sin_port);
    thread_ = std::thread([this] { run(); });
  }
  ~recording_listener() {
    stop_ = true;
    thread_.join();
    ::close(fd_);
  }
  int port() const { return port_; }
  std::vector<std::string> received() {
    std::lock_guard<std::mutex> lock(mu_);
    return got_;
  }

 private:
  void run() {
    while (!stop_) {
      pollfd p{fd_, POLLIN, 0};
      if (::poll(&p, 1, 50) <= 0) continue;
      const int c = ::accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC);
      if (c < 0) continue;
      std::string text;
      char buf[4096];
      for (;;) {  // until the peer pauses for 300 ms or closes
        pollfd q{c, POLLIN, 0};
        if (::poll(&q, 1, 300) <= 0) break;
        const ssize_t n = ::read(c, buf, sizeof buf);
        if (n <= 0) break;
        text.append(buf, static_cast<std::size_t>(n));
      }
      const std::string reply = "HTTP/1.1 500 Internal Server Error\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";
      (void)!::write(c, reply.data(), reply.size());
      ::close(c);
      std::lock_guard<std::mutex> lock(mu_);
      got_.push_back(text.empty() ? "(connected, sent nothing)" : text);
    }
  }
  int fd_ = -1;
  int port_ = 0;
  std::atomic<bool> stop_{false};
  std::thread thread_;
  std::mutex mu_;
  std::vector<std::string> got_;
};

void replace_all(std::string& s, const std::string& from, const std::string& to) {
  for (std::size_t at = 0; (at = s.find(from, at)) != std::string::npos; at += to.size()) s.replace(at, from.size(), to);
}

// mode: "in_process" (QUICKFILL_NO_DAEMON=1) or "daemon" (a daemon of the test's own).
class HostileRepo : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    if (!fs::exists(bundled)) GTEST_SKIP() << "no bundled model at " << bundled;
    root_ = fs::temp_directory_path() / ("qf-hostile-" + std::to_string(::getpid()) + "-" + GetParam());
    fs::remove_all(root_);
    repo_ = root_ / "repo";
    fs::create_directories(root_);
    fs::copy(source_dir + "/tests/security/hostile_repo", repo_, fs::copy_options::recursive);
    fs::copy_file(bundled, repo_ / "models" / "planted.gguf");
    fs::create_directories(root_ / "home");
    user_file_ = root_ / "home" / ".bashrc";
    std::ofstream(user_file_) << "# the user's shell startup file\nexport PATH=$HOME/bin:$PATH\n";
    ::chmod(user_file_.c_str(), 0644);
    user_file_text_ = read_text(user_file_);
    fs::create_directories(root_ / "config" / "quickfill");
    ::setenv("XDG_CONFIG_HOME", (root_ / "config").c_str(), 1);
    ::setenv("QF_HOSTILE_SECRET", "s3cr3t-of-the-user", 1);
    if (GetParam() == "daemon") ::unsetenv("QUICKFILL_NO_DAEMON");
    else ::setenv("QUICKFILL_NO_DAEMON", "1", 1);
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(root_, ec);
  }

  // The repository's quickfill.server object with its places filled in.
  json::object workspace_server_settings() const {
    std::string text = read_text(repo_ / ".vscode" / "settings.json");
    replace_all(text, "@PORT@", std::to_string(recorder_.port()));
    replace_all(text, "@USER_FILE@", user_file_.string());
    replace_all(text, "@REPO@", repo_.string());
    json::parse_options po;
    po.allow_comments = true;
    return json::parse(text, {}, po).at("quickfill.server").as_object();
  }

  bool start(served_model& s, const json::object& options, std::string* error) {
    return s.start_with({"--threads", "1", "--socket-dir", (root_ / "run").string(), "--idle-timeout", "3"}, options,
                        (root_ / "server.log").string(), error, /*require_model=*/false);
  }

  // Opens the repository's .env and sample and asks for completions in both,
  // explicit and automatic (the .env gets none: a private document).
  void complete_twice(served_model& s) {
    const std::string env_uri = "file://" + (repo_ / ".env").string();
    s.notify("textDocument/didOpen",
             json::object{{"textDocument", json::object{{"uri", env_uri}, {"languageId", "dotenv"}, {"version", 1},
                                                        {"text", read_text(repo_ / ".env")}}}});
    for (int kind : {1, 2}) {
      const auto none = s.call("textDocument/completion",
                               json::object{{"textDocument", json::object{{"uri", env_uri}}},
                                            {"position", json::object{{"line", 2}, {"character", 10}}},
                                            {"context", json::object{{"triggerKind", kind}}}});
      ASSERT_TRUE(none);
      const json::value& items = none->is_object() ? none->at("items") : *none;
      EXPECT_TRUE(items.is_null() || items.as_array().empty()) << json::serialize(*none);
    }
    const std::string uri = "file://" + (repo_ / "sample.py").string();
    s.notify("textDocument/didOpen",
             json::object{{"textDocument", json::object{{"uri", uri}, {"languageId", "python"}, {"version", 1},
                                                        {"text", read_text(repo_ / "sample.py")}}}});
    for (int kind : {1, 2})
      ASSERT_TRUE(s.call("textDocument/completion",
                         json::object{{"textDocument", json::object{{"uri", uri}}},
                                      {"position", json::object{{"line", 9}, {"character", 4}}},
                                      {"context", json::object{{"triggerKind", kind}}}}));
  }

  std::string log() const { return read_text(root_ / "server.log"); }

  fs::path root_, repo_, user_file_;
  std::string user_file_text_;
  recording_listener recorder_;
};

TEST_P(HostileRepo, WorkspaceSettingsTakeNothingPrivileged) {
  const json::object hostile = workspace_server_settings();
  json::object options = hostile;
  options["completion"].as_object()["explicitDeadlineMs"] = 60000;
  options["completion"].as_object()["autoDeadlineMs"] = 60000;
  served_model s;
  std::string error;
  ASSERT_TRUE(start(s, json::object{{"quickfill", options}}, &error)) << error << "\n" << log();
  complete_twice(s);
  s.notify("workspace/didChangeConfiguration", json::object{{"settings", json::object{{"quickfill", options}}}});
  ASSERT_TRUE(s.wait_loaded(&error, /*require_model=*/false)) << error;
  complete_twice(s);

  const auto status = s.call("quickfill/status", nullptr);
  ASSERT_TRUE(status);
  // Only the implicit local source, with the default model: not the planted one.
  const json::array& sources = status->at("sources").as_array();
  ASSERT_EQ(sources.size(), 1u) << json::serialize(*status);
  EXPECT_EQ(sources[0].at("name").as_string(), "local");
  const std::string model_path(status->at("modelPath").as_string());
  EXPECT_EQ(model_path.find("planted"), std::string::npos) << model_path;
  EXPECT_NE(model_path.find("quickfill-tiny-code.gguf"), std::string::npos) << model_path;
  // The mode under test: a daemon session, or the editor's own process.
  EXPECT_EQ(status->at("daemon").is_object(), GetParam() == "daemon") << json::serialize(*status);
  EXPECT_EQ(s.stop(), 0);

  // Nothing reached the repository's endpoint; the user's file is untouched.
  EXPECT_TRUE(recorder_.received().empty()) << recorder_.received().front();
  EXPECT_EQ(read_text(user_file_), user_file_text_);
  struct stat st{};
  ASSERT_EQ(::stat(user_file_.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0644u);
  EXPECT_EQ(log().find("s3cr3t-of-the-user"), std::string::npos);
  // The user was told, once, which keys were ignored and where they belong.
  int told = 0;
  for (const auto& m : s.messages)
    if (m.find("ignored settings that only the user config file may set: model, completion.draftModel, sources, "
               "audit.path, audit.includeCode (set them in " +
               (root_ / "config" / "quickfill" / "config.json").string()) != std::string::npos)
      ++told;
  EXPECT_EQ(told, 1) << log();
}

TEST_P(HostileRepo, TheSameSourceInTheUserConfigFileIsUsed) {
  json::object hostile = workspace_server_settings();
  // The user's own choice: the source and an audit log of the user's, in the user config file.
  const fs::path audit = root_ / "home" / "audit.jsonl";
  json::object user{{"sources", hostile.at("sources")}, {"audit", json::object{{"path", audit.string()}}}};
  std::ofstream(root_ / "config" / "quickfill" / "config.json") << json::serialize(json::object{{"quickfill", user}});
  ::chmod((root_ / "config" / "quickfill" / "config.json").c_str(), 0600);
  // The editor only picks routes by name.
  json::object options{{"routes", hostile.at("routes")},
                       {"completion", json::object{{"explicitDeadlineMs", 60000}, {"autoDeadlineMs", 60000}}}};
  served_model s;
  std::string error;
  ASSERT_TRUE(start(s, json::object{{"quickfill", options}}, &error)) << error << "\n" << log();
  complete_twice(s);
  EXPECT_EQ(s.stop(), 0);
  const std::vector<std::string> got = recorder_.received();
  ASSERT_FALSE(got.empty()) << log();
  EXPECT_NE(got[0].find("Authorization: Bearer s3cr3t-of-the-user"), std::string::npos) << got[0];
  EXPECT_TRUE(fs::exists(audit));
  // The .env open beside sample.py: in no request, audit line or log.
  for (const std::string_view secret : {"fixture-aws-secret-9f2c", "fixture-db-password-7d41"}) {
    for (const std::string& request : got) EXPECT_EQ(request.find(secret), std::string::npos) << request;
    EXPECT_EQ(read_text(audit).find(secret), std::string::npos);
    EXPECT_EQ(log().find(secret), std::string::npos);
  }
  for (const auto& m : s.messages) EXPECT_EQ(m.find("ignored settings"), std::string::npos) << m;
}

// daemon.enabled is read from the user config file too (the bridge layers it
// under initializationOptions before it chooses): false keeps the server in
// the editor's process (where the daemon would be used otherwise).
class UserConfigDaemon : public HostileRepo {};

TEST_P(UserConfigDaemon, TheUserConfigFileMayTurnTheDaemonOff) {
  std::ofstream(root_ / "config" / "quickfill" / "config.json") << R"({"quickfill": {"daemon": {"enabled": false}}})";
  ::chmod((root_ / "config" / "quickfill" / "config.json").c_str(), 0600);
  served_model s;
  std::string error;
  ASSERT_TRUE(start(s, json::object{{"quickfill", json::object{}}}, &error)) << error;
  const auto status = s.call("quickfill/status", nullptr);
  ASSERT_TRUE(status);
  EXPECT_TRUE(status->at("daemon").is_null()) << json::serialize(*status);
  EXPECT_EQ(s.stop(), 0);
  EXPECT_NE(log().find("daemon.enabled is false"), std::string::npos) << log();
  // And without it, the same start goes through a daemon.
  fs::remove(root_ / "config" / "quickfill" / "config.json");
  served_model d;
  ASSERT_TRUE(start(d, json::object{{"quickfill", json::object{}}}, &error)) << error;
  const auto via = d.call("quickfill/status", nullptr);
  ASSERT_TRUE(via);
  EXPECT_TRUE(via->at("daemon").is_object()) << json::serialize(*via);
  EXPECT_EQ(d.stop(), 0);
}

INSTANTIATE_TEST_SUITE_P(Modes, HostileRepo, ::testing::Values("in_process", "daemon"),
                         [](const auto& info) { return info.param; });
INSTANTIATE_TEST_SUITE_P(Modes, UserConfigDaemon, ::testing::Values("daemon"),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace qf::test
