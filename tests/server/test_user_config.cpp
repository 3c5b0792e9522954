// Privileged settings come from the user config file only (docs/security.md):
// the file's checks (a regular file of this user, not a symbolic link, not
// writable by group or others), its path from the environment, and the
// layering of the editor's payload over it (privileged keys from the editor
// refused and named, bare model names accepted).
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <boost/json.hpp>

#include "server/core/settings.h"
#include "server/core/user_config.h"

using namespace qf::server;
namespace json = boost::json;
namespace fs = std::filesystem;

namespace {

class UserConfigFile : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("qf-user-config-" + std::to_string(::getpid()) + "-" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string write(const std::string& name, const std::string& text, mode_t mode = 0600) {
    const std::string p = (dir_ / name).string();
    std::ofstream(p) << text;
    ::chmod(p.c_str(), mode);
    return p;
  }
  fs::path dir_;
};

bool has(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

parsed_settings layered(const char* user, const char* editor, std::vector<std::string>* refused) {
  return parse_layered_settings(user ? json::parse(user) : json::value(nullptr),
                                editor ? json::parse(editor) : json::value(nullptr), refused);
}

std::string joined(const std::vector<std::string>& v) {
  std::string out;
  for (const auto& s : v) out += (out.empty() ? "" : ", ") + s;
  return out;
}

}  // namespace

TEST_F(UserConfigFile, MissingFileIsNothing) {
  const user_config c = read_user_config((dir_ / "none" / "config.json").string());
  EXPECT_TRUE(c.payload.is_null());
  EXPECT_EQ(c.refused, "");
  EXPECT_TRUE(read_user_config("").payload.is_null());
}

TEST_F(UserConfigFile, OwnerOnlyRegularFileIsRead) {
  const std::string p = write("config.json", R"({"quickfill": {"audit": {"path": "/tmp/a.jsonl"}}, /* ok */ })", 0600);
  const user_config c = read_user_config(p);
  EXPECT_EQ(c.refused, "");
  ASSERT_TRUE(c.payload.is_object());
  EXPECT_EQ(c.payload.at("quickfill").at("audit").at("path").as_string(), "/tmp/a.jsonl");
  // Readable by others is fine: it holds no secret of its own (keys stay in files or the environment).
  EXPECT_EQ(read_user_config(write("c644.json", "{}", 0644)).refused, "");
}

TEST_F(UserConfigFile, SymbolicLinkIsRefusedEvenToAGoodFile) {
  const std::string target = write("real.json", R"({"sources": []})", 0600);
  const std::string link = (dir_ / "config.json").string();
  fs::create_symlink(target, link);
  const user_config c = read_user_config(link);
  EXPECT_TRUE(c.payload.is_null());
  EXPECT_TRUE(has(c.refused, "symbolic link")) << c.refused;
}

TEST_F(UserConfigFile, GroupOrOtherWritableIsRefused) {
  const user_config g = read_user_config(write("g.json", "{}", 0620));
  EXPECT_TRUE(g.payload.is_null());
  EXPECT_TRUE(has(g.refused, "writable by its group")) << g.refused;
  EXPECT_TRUE(has(g.refused, "0620")) << g.refused;
  const user_config o = read_user_config(write("o.json", "{}", 0602));
  EXPECT_TRUE(o.payload.is_null());
  EXPECT_TRUE(has(o.refused, "writable by others")) << o.refused;
}

TEST_F(UserConfigFile, DirectoryAndBadJsonAreRefused) {
  fs::create_directories(dir_ / "d.json");
  EXPECT_TRUE(has(read_user_config((dir_ / "d.json").string()).refused, "not a regular file"));
  const user_config bad = read_user_config(write("bad.json", "{\"sources\": ", 0600));
  EXPECT_TRUE(bad.payload.is_null());
  EXPECT_TRUE(has(bad.refused, "not valid JSON")) << bad.refused;
}

TEST_F(UserConfigFile, FileOfAnotherUserIsRefused) {
  const std::string p = write("config.json", "{}", 0600);
  if (::geteuid() != 0) GTEST_SKIP() << "giving a file to another user needs root";
  ASSERT_EQ(::chown(p.c_str(), 65534, 65534), 0);
  const user_config c = read_user_config(p);
  EXPECT_TRUE(c.payload.is_null());
  EXPECT_TRUE(has(c.refused, "owned by uid 65534")) << c.refused;
}

TEST(UserConfigPath, FromXdgConfigHomeElseHome) {
  const char* old_xdg = std::getenv("XDG_CONFIG_HOME");
  const std::string saved = old_xdg ? old_xdg : "";
  ::setenv("XDG_CONFIG_HOME", "/x/cfg", 1);
  EXPECT_EQ(default_user_config_path(), "/x/cfg/quickfill/config.json");
  ::setenv("XDG_CONFIG_HOME", "", 1);
  EXPECT_EQ(default_user_config_path(), std::string(std::getenv("HOME")) + "/.config/quickfill/config.json");
  ::unsetenv("XDG_CONFIG_HOME");
  EXPECT_EQ(default_user_config_path(), std::string(std::getenv("HOME")) + "/.config/quickfill/config.json");
  if (old_xdg) ::setenv("XDG_CONFIG_HOME", saved.c_str(), 1);
}

TEST(SettingsLayers, EditorOverridesOrdinaryKeysAndKeepsTheFileForTheRest) {
  std::vector<std::string> refused;
  const char* user = R"({"quickfill": {"completion": {"maxTokens": 7, "maxTokensExplicit": 70}, "device": "cpu"}})";
  const parsed_settings p = layered(user, R"({"quickfill": {"completion.maxTokens": 9, "device": null}})", &refused);
  EXPECT_TRUE(p.usable);
  EXPECT_TRUE(p.problems.empty());
  EXPECT_TRUE(refused.empty());
  EXPECT_EQ(p.values.completion.max_tokens_auto, 9);       // the editor's
  EXPECT_EQ(p.values.completion.max_tokens_explicit, 70);  // the file's: not sent
  EXPECT_EQ(p.values.engine.device, "cpu");                // the file's: null means not given
  // No editor payload at all: the file alone; no file: the defaults.
  EXPECT_EQ(layered(user, nullptr, &refused).values.completion.max_tokens_auto, 7);
  EXPECT_EQ(layered(nullptr, nullptr, &refused).values.completion.max_tokens_auto, 32);
}

TEST(SettingsLayers, PrivilegedKeysFromTheEditorAreRefusedAndNamed) {
  std::vector<std::string> refused;
  const char* user = R"({"audit": {"path": "/home/u/audit.jsonl"}, "model": "/models/mine.gguf"})";
  const char* editor = R"({"quickfill": {
      "sources": [{"name": "evil", "kind": "openai", "url": "http://203.0.113.9/v1", "model": "m",
                   "apiKeyEnv": "AWS_SECRET_ACCESS_KEY"}],
      "routes": {"automatic": ["evil"]},
      "audit.path": "/home/u/.bashrc", "audit": {"includeCode": true},
      "model": "../../planted.gguf", "completion": {"draftModel": "/tmp/x.gguf", "maxTokens": 5}}})";
  const parsed_settings p = layered(user, editor, &refused);
  EXPECT_EQ(joined(refused), "model, completion.draftModel, sources, audit.path, audit.includeCode");
  EXPECT_EQ(p.values.routing.audit_path, "/home/u/audit.jsonl");
  EXPECT_FALSE(p.values.routing.audit_include_code);
  EXPECT_EQ(p.values.server.model, "/models/mine.gguf");
  EXPECT_EQ(p.values.completion.draft_model, "");
  EXPECT_EQ(p.values.completion.max_tokens_auto, 5);  // the rest of the payload applies
  EXPECT_TRUE(p.values.routing.sources_json.as_array().empty());  // the repository's source is not taken
  // The route names a source the user never defined: an error, the routing in force is kept.
  bool route_error = false;
  for (const auto& x : p.problems) route_error = route_error || has(x.message, "evil");
  EXPECT_TRUE(route_error);
}

TEST(SettingsLayers, DefaultsFromTheEditorAskForNothing) {
  std::vector<std::string> refused;
  const parsed_settings p =
      layered(nullptr, R"({"sources": [], "audit": {"path": "", "includeCode": false}, "model": ""})", &refused);
  EXPECT_TRUE(refused.empty()) << joined(refused);
  EXPECT_TRUE(p.problems.empty());
}

TEST(SettingsLayers, BareModelNamesFromTheEditorAreAccepted) {
  std::vector<std::string> refused;
  const parsed_settings p = layered(R"({"model": "/models/mine.gguf"})",
                                    R"({"model": "qwen2.5-coder-0.5b-q8_0.gguf",
                                        "completion": {"draftModel": "tiny"}})",
                                    &refused);
  EXPECT_TRUE(refused.empty()) << joined(refused);
  EXPECT_EQ(p.values.server.model, "qwen2.5-coder-0.5b-q8_0.gguf");
  EXPECT_EQ(p.values.completion.draft_model, "tiny");
  for (const char* bad : {"/abs.gguf", "a/b.gguf", "..\\b.gguf", "a\\b", ".hidden.gguf", "..", "~/m.gguf", "m~", ""})
    EXPECT_FALSE(is_bare_model_name(bad)) << bad;
  for (const char* good : {"m.gguf", "qwen2.5-coder", "a..b"}) EXPECT_TRUE(is_bare_model_name(good)) << good;
}

TEST(SettingsLayers, TheUserFileMaySetPrivilegedKeys) {
  std::vector<std::string> refused;
  const parsed_settings p = layered(
      R"({"quickfill": {"sources": [{"name": "here", "kind": "local", "model": "/m/a.gguf"}],
                        "audit": {"path": "/home/u/audit.jsonl", "includeCode": true},
                        "completion.draftModel": "/m/draft.gguf"}})",
      R"({"quickfill": {"routes": {"explicit": ["here"]}, "completion": {"maxTokens": 3}}})", &refused);
  EXPECT_TRUE(refused.empty());
  EXPECT_TRUE(p.problems.empty()) << p.problems[0].message;
  ASSERT_EQ(p.values.routing.sources.size(), 1u);
  EXPECT_EQ(p.values.routing.sources[0].name, "here");
  EXPECT_EQ(p.values.routing.audit_path, "/home/u/audit.jsonl");
  EXPECT_TRUE(p.values.routing.audit_include_code);
  EXPECT_EQ(p.values.completion.draft_model, "/m/draft.gguf");
}

TEST(SettingsLayers, ProblemsOfTheFileNameItAndAnUnreadableFileIsNotUsed) {
  std::vector<std::string> refused;
  const parsed_settings w = layered(R"({"completion": {"maxTokes": 1}})", nullptr, &refused);
  ASSERT_EQ(w.problems.size(), 1u);
  EXPECT_EQ(w.problems[0].message, "user config file: unknown setting completion.maxTokes (ignored)");
  const parsed_settings e = layered(R"({"quickfill": 5})", R"({"completion": {"maxTokens": 4}})", &refused);
  EXPECT_TRUE(e.usable);  // the editor's payload still applies
  ASSERT_EQ(e.problems.size(), 1u);
  EXPECT_EQ(e.problems[0].level, settings_problem::severity::error);
  EXPECT_TRUE(has(e.problems[0].message, "user config file: ")) << e.problems[0].message;
  EXPECT_EQ(e.values.completion.max_tokens_auto, 4);
  // An editor payload that cannot be read changes nothing, as parse_settings.
  EXPECT_FALSE(layered(nullptr, R"({"quickfill": "fast"})", &refused).usable);
}

TEST(SettingsLayers, SchemaMarksThePrivilegedKeysAndTheReferenceSaysSo) {
  std::vector<std::string> user_file, bare;
  for (const setting_spec& s : settings_schema()) {
    if (s.trust == setting_trust::user_file) user_file.emplace_back(s.key);
    if (s.trust == setting_trust::bare_name) bare.emplace_back(s.key);
  }
  EXPECT_EQ(joined(user_file), "daemon.http, sources, audit.path, audit.includeCode");
  EXPECT_EQ(joined(bare), "model, completion.draftModel");
  const std::string md = render_settings_markdown();
  const auto row = md.find("| `audit.path` |");
  ASSERT_NE(row, std::string::npos);
  EXPECT_TRUE(has(md.substr(row, md.find('\n', row) - row), "User config file only"));
}
