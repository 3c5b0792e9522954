// Runs an untrusted Python program (a model's suggestion inside a HumanEval
// task) the way `quickfill eval` judges it.
//
// Each run is a child process in a fresh scratch folder (removed afterwards)
// holding the program and a small runner: the runner compiles the program
// (a syntax error is reported apart), executes it, executes the test, calls
// `check(entry_point)` and only then writes a line with a random nonce that
// the program never sees in its own text; a pass is exit status 0 and that
// line, so a program that exits early (sys.exit(0), os._exit(0)) fails.
// Limits: CPU seconds (RLIMIT_CPU), address space, file size, no core file,
// a wall-clock timeout after which the whole process group is killed, a
// minimal environment (PATH, HOME and TMPDIR in the scratch folder, no proxy
// variables, -I -S: no user site, no PYTHON* variables), stdin from
// /dev/null. Network: the child first enters new user and network
// namespaces (unshare(CLONE_NEWUSER | CLONE_NEWNET)), where the only
// interface is a loopback that is down; where the kernel refuses that (user
// namespaces disabled), the run goes on with the network of the user and
// sandbox_network() says so (docs/security.md, "quickfill eval").
#pragma once

#include <string>

namespace qf::cli {

struct sandbox_limits {
  int cpu_seconds = 10;
  int wall_ms = 15000;
  long memory_mib = 1024;
  std::string python;  // interpreter; empty: find_python()
};

struct sandbox_result {
  bool passed = false;
  bool syntax_ok = false;   // the program (without the test) compiles
  bool timed_out = false;   // killed at the wall-clock limit (or the CPU limit)
  bool network_isolated = false;
  int exit_code = -1;       // -1: killed by a signal
  std::string error;        // the last lines of stderr, or why it could not run
};

// Runs `program`, then `test`, then check(entry_point). Thread-compatible
// (each run has its own folder); blocks until the child is gone.
sandbox_result run_python_check(const std::string& program, const std::string& test, const std::string& entry_point,
                                const sandbox_limits& limits);

// The absolute path of the python3 on PATH (resolving wrappers such as pyenv
// shims by asking it for sys.executable); "" when there is none.
std::string find_python();

// Whether children can be put into their own network namespace here, probed
// once; the sentence to print about it.
bool sandbox_network(std::string* sentence);

}  // namespace qf::cli
