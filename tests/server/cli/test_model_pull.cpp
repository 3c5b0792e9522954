// `quickfill model pull` and `quickfill model list`, driven as a user runs
// them, against a real nginx on 127.0.0.1 that plays Hugging Face (a 302 from
// /owner/repo/resolve/main/FILE to /cdn/FILE with the file's SHA-256 in
// X-Linked-Etag) and serves the payload, a synthetic GGUF written by
// `quickfill gguf synth`. Faults: a wrong hash, a 404, a redirect loop, the
// server killed mid-body (then the resume must fetch only the missing bytes),
// a file changed on the server since the partial download, a full disk
// (RLIMIT_FSIZE: the write fails with EFBIG) and a file that is not a GGUF.
// Skipped when nginx is not installed.
#include <gtest/gtest.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <thread>

#include <boost/json.hpp>

#include "tests/nginx_server.h"
#include "tests/server/cli/served_model.h"
#include "tests/server/cli/tool_runner.h"

namespace qf::test {
namespace {

namespace fs = std::filesystem;
using std::chrono::milliseconds;

std::string sha256_of(const std::string& path) {
  std::string cmd = "sha256sum '" + path + "'";
  FILE* p = ::popen(cmd.c_str(), "r");
  char buf[128] = {};
  std::string out;
  if (p && std::fgets(buf, sizeof buf, p)) out = std::string(buf).substr(0, 64);
  if (p) ::pclose(p);
  return out;
}

uint64_t file_size_or_0(const std::string& p) {
  std::error_code ec;
  auto n = fs::file_size(p, ec);
  return ec ? 0 : n;
}

// Lines of the access log that match "METHOD URI", once `expect` are there
// (or 2 s passed: nginx logs a request after its response went out).
std::vector<std::string> requests_for(const nginx_server& s, const std::string& method_uri, size_t expect = 1) {
  return s.logged(method_uri + " ", expect);
}

// The last field of an access log line: body bytes sent.
uint64_t bytes_sent(const std::string& line) { return std::stoull(line.substr(line.rfind(' ') + 1)); }

// quickfill with a file size limit (RLIMIT_FSIZE), or started without waiting.
class child {
 public:
  explicit child(const std::vector<std::string>& args, rlim_t fsize_limit = RLIM_INFINITY) {
    out_ = scratch_dir("child_io") + "/out";
    pid_ = ::fork();
    if (pid_ == 0) {
      int fd = ::open(out_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      ::dup2(fd, 1);
      ::dup2(fd, 2);
      if (fsize_limit != RLIM_INFINITY) {
        rlimit rl{fsize_limit, fsize_limit};
        ::setrlimit(RLIMIT_FSIZE, &rl);
      }
      std::vector<char*> argv{const_cast<char*>(QUICKFILL_BIN)};
      for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
      argv.push_back(nullptr);
      ::execv(argv[0], argv.data());
      ::_exit(127);
    }
  }
  // Exit code (-1 for a signal) and the combined output.
  std::pair<int, std::string> wait() {
    int st = 0;
    ::waitpid(pid_, &st, 0);
    return {WIFEXITED(st) ? WEXITSTATUS(st) : -1, read_file(out_)};
  }

 private:
  pid_t pid_ = -1;
  std::string out_;
};

class ModelPull : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (nginx_server::binary().empty()) return;
    root_ = scratch_dir("model_pull");
    fs::create_directories(root_ + "/payload");
    model_ = root_ + "/payload/tiny.gguf";
    synth_ = run_quickfill({"gguf", "synth", "--arch", "qwen2", "--preset", "tiny", "--std", "0.08", "-o", model_});
    sha_ = sha256_of(model_);
  }
  void SetUp() override {
    if (nginx_server::binary().empty()) GTEST_SKIP() << "nginx is not installed (scripts/setup-tests.sh installs it)";
    ASSERT_EQ(synth_.exit_code, 0) << synth_.err;
    ASSERT_EQ(sha_.size(), 64u);
    ASSERT_GT(file_size_or_0(model_), 200000u) << "the payload must be large enough to cut in the middle";
    const std::string name = ::testing::UnitTest::GetInstance()->current_test_info()->name();
    dir_ = scratch_dir("model_pull_" + name);
    data_home_ = dir_ + "/data";
    models_ = data_home_ + "/quickfill/models";
    ::setenv("XDG_DATA_HOME", data_home_.c_str(), 1);
    ::unsetenv("QUICKFILL_MODELS_DIR");
    ::unsetenv("HF_TOKEN");
  }
  void TearDown() override { ::unsetenv("HF_ENDPOINT"); }

  // nginx as Hugging Face: /o/r/resolve/main/F -> 302 /cdn/F with the right
  // hash, /o/bad/... with a wrong one; /loop redirects to itself.
  std::unique_ptr<nginx_server> start_hub(const std::string& cdn_extra = "", int port = 0) {
    const std::string wrong(64, 'e');
    auto s = std::make_unique<nginx_server>(
        dir_ + "/nginx",
        "    location /o/r/resolve/main/ { add_header X-Linked-Etag '\"" + sha_ +
            "\"' always; add_header X-Repo-Commit 0123abcd always;\n"
            "      rewrite ^/o/r/resolve/main/(.*)$ /cdn/$1 redirect; }\n"
            "    location /o/bad/resolve/main/ { add_header X-Linked-Etag '\"" + wrong + "\"' always;\n"
            "      rewrite ^/o/bad/resolve/main/(.*)$ /cdn/$1 redirect; }\n"
            "    location = /loop { return 302 /loop; }\n"
            "    location /cdn/ { " + cdn_extra + " }\n",
        port);
    if (s->ok()) {
      fs::create_directories(s->www() + "/cdn");
      // A restarted server serves the same file (same mtime, so the same ETag).
      fs::copy_file(model_, s->www() + "/cdn/tiny.gguf", fs::copy_options::skip_existing);
      ::setenv("HF_ENDPOINT", s->url("").c_str(), 1);
    }
    return s;
  }

  std::string installed() const { return models_ + "/tiny.gguf"; }
  std::string part() const { return models_ + "/tiny.gguf.part"; }

  static inline std::string root_, model_, sha_;
  static inline run_result synth_;
  std::string dir_, data_home_, models_;
};

TEST_F(ModelPull, HuggingFaceReferenceFollowsTheRedirectAndChecksTheLinkedHash) {
  auto hub = start_hub();
  ASSERT_TRUE(hub->ok()) << hub->error();
  run_result r = run_quickfill({"model", "pull", "o/r:tiny.gguf"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, installed() + "\n");  // stdout: the installed path alone
  EXPECT_NE(r.err.find("matches X-Linked-Etag"), std::string::npos) << r.err;
  EXPECT_EQ(sha256_of(installed()), sha_);
  EXPECT_FALSE(fs::exists(part()));
  EXPECT_FALSE(fs::exists(part() + ".meta"));
  EXPECT_EQ(requests_for(*hub, "GET /o/r/resolve/main/tiny.gguf").size(), 1u);
  ASSERT_EQ(requests_for(*hub, "GET /cdn/tiny.gguf").size(), 1u);
  EXPECT_EQ(bytes_sent(requests_for(*hub, "GET /cdn/tiny.gguf")[0]), file_size_or_0(model_));

  // A second pull finds it and fetches nothing.
  r = run_quickfill({"model", "pull", "o/r:tiny.gguf"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("already pulled"), std::string::npos) << r.err;
  EXPECT_EQ(requests_for(*hub, "GET /cdn/tiny.gguf").size(), 1u);

  r = run_quickfill({"model", "list"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("NAME"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("tiny "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("qwen2"), std::string::npos) << r.out;
}

TEST_F(ModelPull, ThePulledNameIsAModelForTheServer) {
  auto hub = start_hub();
  ASSERT_TRUE(hub->ok()) << hub->error();
  ASSERT_EQ(run_quickfill({"model", "pull", "o/r:tiny.gguf", "--name", "my-coder"}).exit_code, 0);
  served_model s;
  std::string error;
  ASSERT_TRUE(s.start_with({"--model", "my-coder"}, {}, dir_ + "/server.log", &error)) << error;
  const auto st = s.call("quickfill/status", nullptr);
  ASSERT_TRUE(st);
  EXPECT_EQ(std::string(st->at("modelPath").as_string()), models_ + "/my-coder.gguf");
  EXPECT_EQ(s.stop(), 0);
}

// A repository that plants a model file named like a model in the folder the
// editor starts the server in gets nothing loaded: a name means the models
// folder only, in-process and through the daemon (which works in /).
TEST_F(ModelPull, AModelNamedLikeAFileInTheWorkingDirectoryIsNotTakenFromIt) {
  const std::string repo = dir_ + "/repo";
  fs::create_directories(repo);
  fs::copy_file(model_, repo + "/planted.gguf");
  fs::copy_file(model_, repo + "/planted");
  for (const bool daemon : {false, true}) {
    std::vector<std::string> args{"--no-daemon"};
    if (daemon) args = {"--socket-dir", dir_ + "/sock"};
    served_model s;
    std::string error;
    const fs::path old = fs::current_path();
    fs::current_path(repo);
    const bool started = s.start_with(args, json::object{{"model", "planted"}}, dir_ + "/server.log", &error,
                                      /*require_model=*/false);
    fs::current_path(old);
    ASSERT_TRUE(started) << error;
    const auto st = s.call("quickfill/status", nullptr);
    ASSERT_TRUE(st);
    EXPECT_FALSE(st->at("modelLoaded").as_bool()) << daemon << " " << json::serialize(*st);
    EXPECT_EQ(std::string(st->at("modelPath").as_string()), models_ + "/planted.gguf") << json::serialize(*st);
    EXPECT_EQ(s.stop(), 0);
  }
  // The daemon this test started goes with it.
  std::ifstream pid_file(dir_ + "/sock/daemon.pid");
  long pid = 0;
  if (pid_file >> pid && pid > 0) ::kill(static_cast<pid_t>(pid), SIGTERM);
}

TEST_F(ModelPull, WrongHashIsRejectedAndNothingIsInstalled) {
  auto hub = start_hub();
  ASSERT_TRUE(hub->ok()) << hub->error();
  run_result r = run_quickfill({"model", "pull", "o/bad:tiny.gguf"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("SHA-256 mismatch"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(std::string(64, 'e')), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(sha_), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(installed()));
  EXPECT_FALSE(fs::exists(part()));

  // --sha256 checks a plain URL the same way.
  r = run_quickfill({"model", "pull", hub->url("/cdn/tiny.gguf"), "--sha256", std::string(64, 'a')});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("SHA-256 mismatch"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(installed()));
  r = run_quickfill({"model", "pull", hub->url("/cdn/tiny.gguf"), "--sha256", sha_});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("matches --sha256"), std::string::npos) << r.err;
}

TEST_F(ModelPull, NotFoundSaysWhatToCheck) {
  auto hub = start_hub();
  ASSERT_TRUE(hub->ok()) << hub->error();
  run_result r = run_quickfill({"model", "pull", "o/nothing:tiny.gguf"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("HTTP 404 Not Found from " + hub->url("/o/nothing/resolve/main/tiny.gguf")), std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("o/nothing exists and has this file"), std::string::npos) << r.err;
  EXPECT_TRUE(!fs::exists(models_) || fs::is_empty(models_));
  // A revision and a file in a subfolder land where Hugging Face keeps them.
  r = run_quickfill({"model", "pull", "o/r:sub/dir/other.gguf@v1.0"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("pulling other\n"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("HTTP 404 Not Found from " + hub->url("/o/r/resolve/v1.0/sub/dir/other.gguf")),
            std::string::npos)
      << r.err;
}

TEST_F(ModelPull, RedirectLoopIsBounded) {
  auto hub = start_hub();
  ASSERT_TRUE(hub->ok()) << hub->error();
  run_result r = run_quickfill({"model", "pull", hub->url("/loop"), "--name", "loop"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("more than 10 redirects"), std::string::npos) << r.err;
  EXPECT_EQ(requests_for(*hub, "GET /loop", 11).size(), 11u);
}

TEST_F(ModelPull, InterruptedDownloadResumesWithOnlyTheMissingBytes) {
  // The CDN sends 64 KiB at once and then trickles; the server is killed
  // while the body is still coming.
  auto hub = start_hub("limit_rate_after 64k; limit_rate 2k;");
  ASSERT_TRUE(hub->ok()) << hub->error();
  const int port = hub->port();
  child puller({"model", "pull", "o/r:tiny.gguf"});
  for (int i = 0; i < 1500 && file_size_or_0(part()) < 65536; ++i) std::this_thread::sleep_for(milliseconds(20));
  ASSERT_GE(file_size_or_0(part()), 65536u) << "the first 64 KiB did not arrive";
  hub->kill_now();
  auto [code, out] = puller.wait();
  EXPECT_EQ(code, 1) << out;
  EXPECT_NE(out.find("closed after"), std::string::npos) << out;
  EXPECT_NE(out.find("run the same command again to resume"), std::string::npos) << out;
  const uint64_t kept = file_size_or_0(part());
  const uint64_t total = file_size_or_0(model_);
  ASSERT_GE(kept, 65536u);
  ASSERT_LT(kept, total);
  EXPECT_FALSE(fs::exists(installed()));

  // The same server comes back (same URL); the pull resumes at `kept`.
  hub.reset();
  auto again = start_hub("", port);
  ASSERT_TRUE(again->ok()) << again->error();
  run_result r = run_quickfill({"model", "pull", "o/r:tiny.gguf"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("resuming tiny at"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("matches X-Linked-Etag"), std::string::npos) << r.err;
  auto gets = requests_for(*again, "GET /cdn/tiny.gguf");
  ASSERT_EQ(gets.size(), 1u);
  EXPECT_NE(gets[0].find("\"bytes=" + std::to_string(kept) + "-\""), std::string::npos) << gets[0];
  EXPECT_NE(gets[0].find(" 206 "), std::string::npos) << gets[0];
  EXPECT_EQ(bytes_sent(gets[0]), total - kept);
  EXPECT_EQ(sha256_of(installed()), sha_);
  EXPECT_FALSE(fs::exists(part()));
}

TEST_F(ModelPull, FileChangedOnTheServerStartsOver) {
  auto hub = start_hub();
  ASSERT_TRUE(hub->ok()) << hub->error();
  // A part left by an earlier pull of this URL, of a version of the file the
  // server no longer has (another ETag, other bytes).
  fs::create_directories(models_);
  write_file(part(), std::string(100000, 'x'));
  write_file(part() + ".meta", "url " + hub->url("/o/r/resolve/main/tiny.gguf") + "\netag \"5f0-old\"\n");
  run_result r = run_quickfill({"model", "pull", "o/r:tiny.gguf"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("starting over"), std::string::npos) << r.err;
  auto gets = requests_for(*hub, "GET /cdn/tiny.gguf");
  ASSERT_EQ(gets.size(), 1u);
  // nginx compared If-Range with its ETag and sent the whole file.
  EXPECT_NE(gets[0].find("\"bytes=100000-\" \"\\x225f0-old\\x22\" \"-\" 200"), std::string::npos) << gets[0];
  EXPECT_EQ(bytes_sent(gets[0]), file_size_or_0(model_));
  EXPECT_EQ(sha256_of(installed()), sha_);
}

TEST_F(ModelPull, APartThatIsAlreadyCompleteIsVerifiedAndInstalled) {
  auto hub = start_hub();
  ASSERT_TRUE(hub->ok()) << hub->error();
  // An earlier run received every byte and stopped before the rename.
  fs::create_directories(models_);
  fs::copy_file(model_, part());
  write_file(part() + ".meta", "url " + hub->url("/o/r/resolve/main/tiny.gguf") + "\n");
  run_result r = run_quickfill({"model", "pull", "o/r:tiny.gguf"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("already holds the whole file"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("matches X-Linked-Etag"), std::string::npos) << r.err;
  auto gets = requests_for(*hub, "GET /cdn/tiny.gguf");
  ASSERT_EQ(gets.size(), 1u);
  EXPECT_NE(gets[0].find(" 416 "), std::string::npos) << gets[0];
  EXPECT_EQ(sha256_of(installed()), sha_);
  EXPECT_FALSE(fs::exists(part()));
}

TEST_F(ModelPull, FullDiskKeepsThePartAndTheNextRunResumes) {
  auto hub = start_hub();
  ASSERT_TRUE(hub->ok()) << hub->error();
  const rlim_t limit = 150000;  // the file may not grow past this: write() fails with EFBIG
  child puller({"model", "pull", "o/r:tiny.gguf"}, limit);
  auto [code, out] = puller.wait();
  EXPECT_EQ(code, 1) << out;
  EXPECT_NE(out.find("the disk is full (File too large)"), std::string::npos) << out;
  EXPECT_NE(out.find("the partial download is kept in " + part()), std::string::npos) << out;
  EXPECT_EQ(file_size_or_0(part()), limit);  // every byte that could be written is kept
  EXPECT_FALSE(fs::exists(installed()));

  run_result r = run_quickfill({"model", "pull", "o/r:tiny.gguf"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto gets = requests_for(*hub, "GET /cdn/tiny.gguf", 2);
  ASSERT_EQ(gets.size(), 2u);
  EXPECT_NE(gets[1].find("\"bytes=" + std::to_string(limit) + "-\""), std::string::npos) << gets[1];
  EXPECT_EQ(bytes_sent(gets[1]), file_size_or_0(model_) - limit);
  EXPECT_EQ(sha256_of(installed()), sha_);
}

TEST_F(ModelPull, AFileThatIsNotAGgufIsNotInstalled) {
  auto hub = start_hub();
  ASSERT_TRUE(hub->ok()) << hub->error();
  write_file(hub->www() + "/cdn/readme.gguf", std::string(5000, 'z'));
  run_result r = run_quickfill({"model", "pull", hub->url("/cdn/readme.gguf")});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("is not a GGUF model"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(models_ + "/readme.gguf"));
  EXPECT_FALSE(fs::exists(models_ + "/readme.gguf.part"));
}

// The first bytes of the payload as a part left by an earlier run, with its record.
void leave_part(const std::string& model, const std::string& part, const std::string& meta_text) {
  fs::create_directories(fs::path(part).parent_path());
  const std::string bytes = read_file(model);
  write_file(part, bytes.substr(0, 100000));
  write_file(part + ".meta", meta_text);
}

// A resume keeps the hash the download began with: a run that gives none (a
// plain URL whose server sends no hash) still checks the whole file against it.
TEST_F(ModelPull, AResumeKeepsTheFirstRunsExpectedHash) {
  auto hub = start_hub();
  ASSERT_TRUE(hub->ok()) << hub->error();
  const std::string url = hub->url("/cdn/tiny.gguf");
  leave_part(model_, part(), "url " + url + "\nsha256 " + std::string(64, 'a') + "\n");
  run_result r = run_quickfill({"model", "pull", url});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find("resuming tiny at"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("SHA-256 mismatch"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("the hash recorded when the download began"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(installed()));

  // With the right recorded hash the same resume is checked and installed.
  leave_part(model_, part(), "url " + url + "\nsha256 " + sha_ + "\n");
  r = run_quickfill({"model", "pull", url});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("matches the hash recorded when the download began"), std::string::npos) << r.err;
  EXPECT_EQ(sha256_of(installed()), sha_);
}

TEST_F(ModelPull, AResumeWithAnotherSha256IsRefused) {
  auto hub = start_hub();
  ASSERT_TRUE(hub->ok()) << hub->error();
  const std::string url = hub->url("/cdn/tiny.gguf");
  leave_part(model_, part(), "url " + url + "\nsha256 " + sha_ + "\n");
  run_result r = run_quickfill({"model", "pull", url, "--sha256", std::string(64, 'b')});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find("was begun expecting SHA-256 " + sha_), std::string::npos) << r.err;
  EXPECT_EQ(file_size_or_0(part()), 100000u);  // kept, not resumed, not accepted
  EXPECT_FALSE(fs::exists(installed()));
  EXPECT_TRUE(requests_for(*hub, "GET /cdn/tiny.gguf", 0).empty());

  r = run_quickfill({"model", "pull", url, "--sha256", sha_});  // the hash it began with: resumed
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("resuming tiny at"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("matches --sha256"), std::string::npos) << r.err;
  EXPECT_EQ(sha256_of(installed()), sha_);
}

TEST_F(ModelPull, Sha256IsCheckedWhenTheModelIsAlreadyInstalled) {
  auto hub = start_hub();
  ASSERT_TRUE(hub->ok()) << hub->error();
  fs::create_directories(models_);
  write_file(installed(), "not the model");
  run_result r = run_quickfill({"model", "pull", "o/r:tiny.gguf", "--sha256", sha_});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find("is already installed and its SHA-256 is"), std::string::npos) << r.err;
  EXPECT_EQ(read_file(installed()), "not the model");
  r = run_quickfill({"model", "pull", "o/r:tiny.gguf", "--sha256", sha_, "--force"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  r = run_quickfill({"model", "pull", "o/r:tiny.gguf", "--sha256", sha_});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("already pulled"), std::string::npos) << r.err;
}

// The part and its record are quickfill's own files: created 0600, and a
// symbolic link planted in their place is refused, not written through.
TEST_F(ModelPull, PartFilesArePrivateAndLinksAreRefused) {
  auto hub = start_hub("limit_rate_after 64k; limit_rate 2k;");
  ASSERT_TRUE(hub->ok()) << hub->error();
  child puller({"model", "pull", "o/r:tiny.gguf"});
  for (int i = 0; i < 1500 && file_size_or_0(part()) < 65536; ++i) std::this_thread::sleep_for(milliseconds(20));
  struct stat pst {}, mst {};
  ASSERT_EQ(::stat(part().c_str(), &pst), 0);
  ASSERT_EQ(::stat((part() + ".meta").c_str(), &mst), 0);
  EXPECT_EQ(pst.st_mode & 0777, 0600u);
  EXPECT_EQ(mst.st_mode & 0777, 0600u);
  hub->kill_now();
  puller.wait();

  const std::string victim = dir_ + "/victim";
  write_file(victim, "keep");
  fs::remove(part());
  fs::create_symlink(victim, part());
  auto again = start_hub();
  ASSERT_TRUE(again->ok()) << again->error();
  run_result r = run_quickfill({"model", "pull", "o/r:tiny.gguf"});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find("symbolic link"), std::string::npos) << r.err;
  EXPECT_EQ(read_file(victim), "keep");
  fs::remove(part());
  fs::remove(part() + ".meta");
  fs::create_symlink(victim, part() + ".meta");
  r = run_quickfill({"model", "pull", "o/r:tiny.gguf"});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find("symbolic link"), std::string::npos) << r.err;
  EXPECT_EQ(read_file(victim), "keep");
}

// The pull's check reads the header with the engine's reader, whose memory
// is bounded: a file of nested empty arrays is refused, not allowed to take
// ~9x its size, and nothing of it is kept.
TEST_F(ModelPull, AHostileGgufIsRefusedByTheCheck) {
  auto hub = start_hub();
  ASSERT_TRUE(hub->ok()) << hub->error();
  std::string b;
  auto put = [&](auto v) { b.append(reinterpret_cast<const char*>(&v), sizeof v); };
  put(uint32_t{0x46554747});
  put(uint32_t{3});
  put(uint64_t{0});
  put(uint64_t{1});
  put(uint64_t{1});
  b += "k";
  put(uint32_t{9});
  put(uint32_t{9});
  const uint64_t n = 400000;
  put(n);
  for (uint64_t i = 0; i < n; ++i) {
    put(uint32_t{0});
    put(uint64_t{0});
  }
  write_file(hub->www() + "/cdn/nested.gguf", b);
  run_result r = run_quickfill({"model", "pull", hub->url("/cdn/nested.gguf")});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("is not a GGUF model"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("bytes of memory"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(models_ + "/nested.gguf"));
  EXPECT_FALSE(fs::exists(models_ + "/nested.gguf.part"));
}

TEST_F(ModelPull, BadReferencesAreUsageErrors) {
  run_result r = run_quickfill({"model", "pull", "just-a-name"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("owner/repo:file.gguf"), std::string::npos) << r.err;
  r = run_quickfill({"model", "pull", "o/r:../x.gguf"});
  EXPECT_EQ(r.exit_code, 2);
  r = run_quickfill({"model", "pull", "o/r:x.gguf", "--sha256", "abc"});
  EXPECT_EQ(r.exit_code, 2);
}

}  // namespace
}  // namespace qf::test
