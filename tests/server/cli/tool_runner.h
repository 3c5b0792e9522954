// Test helpers: run the quickfill binary (or any command) and capture its exit
// status, stdout and stderr; per-test scratch folders; the shared data path.
#pragma once

#include <string>
#include <vector>

namespace qf::test {

struct run_result {
  int exit_code = -1;     // -1 when the process did not exit normally (signal)
  int signal = 0;
  std::string out, err;
};

// Runs argv[0] with the arguments (no shell), stdin from /dev/null.
run_result run_process(const std::vector<std::string>& argv);
// Runs the quickfill binary under test with these arguments.
run_result run_quickfill(const std::vector<std::string>& args);

// A fresh empty folder for this test, removed at process exit.
std::string scratch_dir(const std::string& name);
// ../shared/data (QUICKFILL_TEST_DATA env, else the CMake default); "" when absent.
std::string test_data_dir();
std::string source_dir();
std::string read_file(const std::string& path);
void write_file(const std::string& path, const std::string& bytes);
// "/usr/bin/python3" when it exists and imports numpy; "" otherwise.
std::string python_with_numpy();

}  // namespace qf::test
