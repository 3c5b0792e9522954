// Process and file helpers of the golden tests (see tool_runner.h).
#include "tests/server/cli/tool_runner.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "tests/shared_test_data.h"

extern char** environ;

namespace qf::test {
namespace fs = std::filesystem;

run_result run_process(const std::vector<std::string>& argv) {
  run_result r;
  static int counter = 0;
  fs::path base = fs::temp_directory_path() /
                  ("qf_golden_io_" + std::to_string(getpid()) + "_" + std::to_string(counter++));
  std::string out_path = base.string() + ".out", err_path = base.string() + ".err";
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&fa, 1, out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&fa, 2, err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = 0;
  int rc = posix_spawn(&pid, args[0], &fa, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  if (rc != 0) {
    r.err = "cannot start " + argv[0];
    return r;
  }
  int status = 0;
  waitpid(pid, &status, 0);
  if (WIFEXITED(status)) r.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) r.signal = WTERMSIG(status);
  r.out = read_file(out_path);
  r.err = read_file(err_path);
  std::error_code ec;
  fs::remove(out_path, ec);
  fs::remove(err_path, ec);
  return r;
}

run_result run_quickfill(const std::vector<std::string>& args) {
  std::vector<std::string> argv{QUICKFILL_BIN};
  argv.insert(argv.end(), args.begin(), args.end());
  return run_process(argv);
}

namespace {
struct scratch_root {
  fs::path root = fs::temp_directory_path() / ("qf_golden_" + std::to_string(getpid()));
  ~scratch_root() {
    std::error_code ec;
    fs::remove_all(root, ec);
  }
};
scratch_root& root() {
  static scratch_root r;
  return r;
}
}  // namespace

std::string scratch_dir(const std::string& name) {
  fs::path p = root().root / name;
  std::error_code ec;
  fs::remove_all(p, ec);
  fs::create_directories(p);
  return p.string();
}

std::string test_data_dir() {
  const std::string d = qf::test::shared_test_data(QUICKFILL_TEST_DATA_DEFAULT);
  return fs::is_directory(d) ? d : std::string();
}

std::string source_dir() { return QUICKFILL_SOURCE_DIR; }

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void write_file(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

std::string python_with_numpy() {
  static const std::string py = [] {
    const std::string exe = "/usr/bin/python3";
    if (!fs::exists(exe)) return std::string();
    run_result r = run_process({exe, "-c", "import numpy"});
    return r.exit_code == 0 ? exe : std::string();
  }();
  return py;
}

}  // namespace qf::test
