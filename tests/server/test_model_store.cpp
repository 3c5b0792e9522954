// The models folder (XDG_DATA_HOME, HOME, QUICKFILL_MODELS_DIR) and how
// --model and the model setting resolve a pulled model's name.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "server/core/model_locator.h"
#include "server/core/model_store.h"
#include "server/core/server_args.h"

namespace qf::server {
namespace {

namespace fs = std::filesystem;

class ModelStore : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = (fs::temp_directory_path() / ("qf_model_store_" + std::to_string(::getpid()))).string();
    fs::remove_all(dir_);
    fs::create_directories(dir_ + "/data/quickfill/models");
    std::ofstream(dir_ + "/data/quickfill/models/coder.gguf") << "x";
    for (const char* v : {"XDG_DATA_HOME", "HOME", "QUICKFILL_MODELS_DIR"}) {
      const char* old = std::getenv(v);
      saved_.push_back({v, old ? std::optional<std::string>(old) : std::nullopt});
    }
    ::setenv("XDG_DATA_HOME", (dir_ + "/data").c_str(), 1);
    ::unsetenv("QUICKFILL_MODELS_DIR");
  }
  void TearDown() override {
    for (const auto& [k, v] : saved_) v ? (void)::setenv(k.c_str(), v->c_str(), 1) : (void)::unsetenv(k.c_str());
    fs::remove_all(dir_);
  }
  std::string dir_;
  std::vector<std::pair<std::string, std::optional<std::string>>> saved_;
};

TEST_F(ModelStore, FolderFollowsXdgThenHome) {
  EXPECT_EQ(models_dir(), dir_ + "/data/quickfill/models");
  ::setenv("XDG_DATA_HOME", "relative/path", 1);  // not absolute: ignored, as the XDG rule says
  ::setenv("HOME", "/home/someone", 1);
  EXPECT_EQ(models_dir(), "/home/someone/.local/share/quickfill/models");
  ::unsetenv("XDG_DATA_HOME");
  EXPECT_EQ(models_dir(), "/home/someone/.local/share/quickfill/models");
  ::setenv("QUICKFILL_MODELS_DIR", "/srv/models", 1);
  EXPECT_EQ(models_dir(), "/srv/models");
}

TEST_F(ModelStore, NamesResolveToPulledFiles) {
  const std::string pulled = dir_ + "/data/quickfill/models/coder.gguf";
  EXPECT_EQ(resolve_model_argument("coder"), pulled);
  EXPECT_EQ(resolve_model_argument("coder.gguf"), pulled);
  // Not pulled: still the models folder's path, for the loader to report.
  EXPECT_EQ(resolve_model_argument("other"), dir_ + "/data/quickfill/models/other.gguf");
  EXPECT_EQ(resolve_model_argument("./coder"), "./coder");  // a path stays a path
  EXPECT_EQ(resolve_model_argument(dir_ + "/x.gguf"), dir_ + "/x.gguf");
  ::unsetenv("XDG_DATA_HOME");
  ::unsetenv("HOME");
  EXPECT_EQ(resolve_model_argument("coder"), "");  // no models folder: nothing, never the working directory
}

// A repository that plants a file named like a model in the working directory
// (the editor's, often the repository itself) is never picked up by name.
TEST_F(ModelStore, AFileOfThatNameInTheWorkingDirectoryIsIgnored) {
  const fs::path old = fs::current_path();
  fs::create_directories(dir_ + "/repo");
  fs::current_path(dir_ + "/repo");
  std::ofstream("coder") << "planted";
  std::ofstream("coder.gguf") << "planted";
  std::ofstream("planted.gguf") << "planted";
  EXPECT_EQ(resolve_model_argument("coder"), dir_ + "/data/quickfill/models/coder.gguf");
  EXPECT_EQ(resolve_model_argument("coder.gguf"), dir_ + "/data/quickfill/models/coder.gguf");
  EXPECT_EQ(resolve_model_argument("planted.gguf"), dir_ + "/data/quickfill/models/planted.gguf");
  EXPECT_EQ(choose_model("", "planted").path, dir_ + "/data/quickfill/models/planted.gguf");
  EXPECT_EQ(choose_model("planted.gguf", "").path, dir_ + "/data/quickfill/models/planted.gguf");
  EXPECT_EQ(resolve_model_argument("./planted.gguf"), "./planted.gguf");  // an explicit path is the user's choice
  fs::current_path(old);
}

// A setting names a model by name or absolute path (or ~/): a relative path
// would mean the server's working directory, the editor's repository.
TEST_F(ModelStore, SettingsRefuseRelativePaths) {
  std::string error;
  EXPECT_EQ(resolve_model_setting("coder", &error), dir_ + "/data/quickfill/models/coder.gguf");
  EXPECT_EQ(resolve_model_setting("/srv/m.gguf", &error), "/srv/m.gguf");
  ::setenv("HOME", "/home/someone", 1);
  EXPECT_EQ(resolve_model_setting("~/m/x.gguf", &error), "/home/someone/m/x.gguf");
  for (const char* rel : {"./planted.gguf", "models/planted.gguf", "../planted.gguf", ".", ".."}) {
    error.clear();
    EXPECT_EQ(resolve_model_setting(rel, &error), "") << rel;
    EXPECT_NE(error.find("relative"), std::string::npos) << rel << ": " << error;
  }
  model_choice c = choose_model("", "models/planted.gguf");
  EXPECT_EQ(c.path, "");
  EXPECT_NE(c.error.find("models/planted.gguf"), std::string::npos) << c.error;
  c = choose_model("./cli.gguf", "");  // the command line is the user's: as given
  EXPECT_EQ(c.path, "./cli.gguf");
  EXPECT_TRUE(c.error.empty());
}

// The command line is resolved where it is given: a name against this
// process's models folder, a relative path against its working directory, so
// the daemon (in /, with its own environment) gets absolute paths.
TEST_F(ModelStore, TheCommandLineArrivesAbsolute) {
  const fs::path old = fs::current_path();
  fs::current_path(dir_);
  auto parse = [](std::vector<std::string> args) {
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    server_args out;
    std::string error;
    EXPECT_TRUE(parse_server_args(std::span<char*>(argv), out, &error)) << error;
    return out;
  };
  EXPECT_EQ(parse({"--model", "coder"}).model_path, dir_ + "/data/quickfill/models/coder.gguf");
  EXPECT_EQ(parse({"--model", "absent"}).model_path, dir_ + "/data/quickfill/models/absent.gguf");
  EXPECT_EQ(parse({"--model", "./x.gguf"}).model_path, dir_ + "/x.gguf");
  EXPECT_EQ(parse({"--model", "sub/../x.gguf"}).model_path, dir_ + "/x.gguf");
  EXPECT_EQ(parse({"--model", "/abs/x.gguf"}).model_path, "/abs/x.gguf");
  const server_args a = parse({"--log-file", "q.log", "--socket-dir", "sock"});
  EXPECT_EQ(a.log_file, dir_ + "/q.log");
  EXPECT_EQ(a.socket_dir, dir_ + "/sock");
  fs::current_path(old);
}

TEST_F(ModelStore, CommandLineAndSettingAcceptNames) {
  const std::string pulled = dir_ + "/data/quickfill/models/coder.gguf";
  model_choice c = choose_model("coder", "");
  EXPECT_EQ(c.path, pulled);
  EXPECT_EQ(c.source, "--model");
  c = choose_model("", "coder");
  EXPECT_EQ(c.path, pulled);
  EXPECT_EQ(c.source, "setting");
}

}  // namespace
}  // namespace qf::server
