// The execution sandbox of `quickfill eval` (see the header).
#include "server/cli/eval_sandbox.h"

#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>
#include <vector>

#include "indexing/private_file.h"

namespace qf::cli {
namespace {

namespace fs = std::filesystem;

// Reads the nonce from stdin (a pipe the parent closes), points stdin at
// /dev/null, compiles the program, runs it and the test, calls check() and
// writes the nonce: only a run that got through check() can print it.
constexpr const char* k_runner = R"PY(import os, sys
nonce = sys.stdin.readline().strip()
fd = os.open(os.devnull, os.O_RDONLY)
os.dup2(fd, 0)
os.close(fd)
sys.stdin = open(os.devnull)
entry = sys.argv[1]
with open("program.py", encoding="utf-8") as f:
    src = f.read()
try:
    code = compile(src, "program.py", "exec")
except (SyntaxError, ValueError) as e:
    sys.stderr.write("SyntaxError: %s\n" % e)
    sys.exit(3)
sys.stdout.write("quickfill-syntax-ok\n")
sys.stdout.flush()
del f, fd
g = {"__name__": "program", "__builtins__": __builtins__}
exec(code, g)
with open("test.py", encoding="utf-8") as f:
    exec(compile(f.read(), "test.py", "exec"), g)
g["check"](g[entry])
sys.stdout.write("\nquickfill-passed " + nonce + "\n")
sys.stdout.flush()
)PY";

bool write_file(const fs::path& p, const std::string& s) {
  std::ofstream o(p, std::ios::binary | std::ios::trunc);
  o << s;
  return static_cast<bool>(o);
}

std::string read_file(const fs::path& p, size_t max) {
  std::ifstream i(p, std::ios::binary);
  std::string s((std::istreambuf_iterator<char>(i)), std::istreambuf_iterator<char>());
  if (s.size() > max) s = s.substr(s.size() - max);
  return s;
}

void write_proc(const char* path, const char* s) {
  const int fd = ::open(path, O_WRONLY | O_CLOEXEC);
  if (fd < 0) return;
  [[maybe_unused]] ssize_t n = ::write(fd, s, std::strlen(s));
  ::close(fd);
}

// The user's own id mapped to itself in a new user namespace ("UID UID 1"),
// made before fork: a forked child of this multi-threaded process may only
// make async-signal-safe calls, so no allocation there.
struct id_maps {
  std::string uid = std::to_string(::getuid()) + " " + std::to_string(::getuid()) + " 1";
  std::string gid = std::to_string(::getgid()) + " " + std::to_string(::getgid()) + " 1";
};

// In a forked child: new user and network namespaces, the user mapped to
// itself (so files it creates keep their owner). False when refused.
bool enter_namespaces(const id_maps& maps) {
  if (::unshare(CLONE_NEWUSER | CLONE_NEWNET) != 0) return false;
  write_proc("/proc/self/setgroups", "deny");
  write_proc("/proc/self/uid_map", maps.uid.c_str());
  write_proc("/proc/self/gid_map", maps.gid.c_str());
  return true;
}

void set_limit(int resource, rlim_t soft, rlim_t hard) {
  struct rlimit r {soft, hard};
  ::setrlimit(resource, &r);
}
void set_limit(int resource, rlim_t value) { set_limit(resource, value, value); }

fs::path make_scratch() {
  const char* tmp = std::getenv("TMPDIR");
  std::string templ = std::string(tmp && *tmp ? tmp : "/tmp") + "/quickfill-eval-XXXXXX";
  std::vector<char> buf(templ.begin(), templ.end());
  buf.push_back('\0');
  if (!::mkdtemp(buf.data())) return {};
  return fs::path(buf.data());
}

// The last `lines` non-empty lines of `s`, joined by " | ".
std::string tail_lines(const std::string& s, int lines) {
  std::vector<std::string> v;
  std::istringstream in(s);
  for (std::string l; std::getline(in, l);)
    if (!l.empty()) v.push_back(l);
  std::string o;
  for (size_t i = v.size() > static_cast<size_t>(lines) ? v.size() - lines : 0; i < v.size(); ++i)
    o += (o.empty() ? "" : " | ") + v[i];
  return o;
}

}  // namespace

std::string find_python() {
  FILE* p = ::popen("python3 -c 'import sys; print(sys.executable)' 2>/dev/null", "r");
  if (!p) return "";
  char buf[4096];
  std::string out;
  while (std::fgets(buf, sizeof buf, p)) out += buf;
  ::pclose(p);
  while (!out.empty() && (out.back() == '\n' || out.back() == '\r')) out.pop_back();
  return !out.empty() && out[0] == '/' ? out : "";
}

bool sandbox_network(std::string* sentence) {
  static const bool isolated = [] {
    const id_maps maps;
    const pid_t pid = ::fork();
    if (pid < 0) return false;
    if (pid == 0) ::_exit(enter_namespaces(maps) ? 0 : 1);
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    return WIFEXITED(status) && WEXITSTATUS(status) == 0;
  }();
  if (sentence)
    *sentence = isolated ? "programs run without network (own user and network namespaces)"
                         : "programs run WITH the network: this kernel refuses unprivileged user namespaces "
                           "(docs/security.md, \"quickfill eval\")";
  return isolated;
}

sandbox_result run_python_check(const std::string& program, const std::string& test, const std::string& entry_point,
                                const sandbox_limits& limits) {
  sandbox_result r;
  const std::string python = limits.python.empty() ? find_python() : limits.python;
  if (python.empty()) {
    r.error = "no python3 found on PATH";
    return r;
  }
  r.network_isolated = sandbox_network(nullptr);
  const fs::path dir = make_scratch();
  if (dir.empty()) {
    r.error = std::string("cannot make a scratch folder: ") + std::strerror(errno);
    return r;
  }
  struct cleanup {
    fs::path d;
    ~cleanup() {
      std::error_code ec;
      fs::remove_all(d, ec);
    }
  } clean{dir};
  if (!write_file(dir / "program.py", program) || !write_file(dir / "test.py", test) ||
      !write_file(dir / "runner.py", k_runner)) {
    r.error = "cannot write into " + dir.string();
    return r;
  }
  const std::string nonce = index::random_hex(16);
  int in_pipe[2];
  if (::pipe2(in_pipe, O_CLOEXEC) != 0) {
    r.error = std::string("pipe: ") + std::strerror(errno);
    return r;
  }
  const std::string out_path = (dir / "stdout.txt").string(), err_path = (dir / "stderr.txt").string();
  const std::string home = "HOME=" + dir.string(), tmpdir = "TMPDIR=" + dir.string();
  std::vector<std::string> argv_s = {python, "-I", "-S", "-B", "runner.py", entry_point};
  std::vector<std::string> env_s = {"PATH=/usr/bin:/bin", home, tmpdir, "LANG=C.UTF-8", "PYTHONHASHSEED=0"};
  std::vector<char*> argv, envp;
  for (std::string& s : argv_s) argv.push_back(s.data());
  argv.push_back(nullptr);
  for (std::string& s : env_s) envp.push_back(s.data());
  envp.push_back(nullptr);
  const bool isolate = r.network_isolated;
  const id_maps maps;
  // Between fork and exec only async-signal-safe calls: everything is prepared above.
  const pid_t pid = ::fork();
  if (pid < 0) {
    ::close(in_pipe[0]);
    ::close(in_pipe[1]);
    r.error = std::string("fork: ") + std::strerror(errno);
    return r;
  }
  if (pid == 0) {
    ::setsid();
    if (isolate && !enter_namespaces(maps)) ::_exit(125);
    // SIGXCPU at the limit, SIGKILL a second later if it is caught.
    set_limit(RLIMIT_CPU, static_cast<rlim_t>(limits.cpu_seconds), static_cast<rlim_t>(limits.cpu_seconds) + 1);
    set_limit(RLIMIT_AS, static_cast<rlim_t>(limits.memory_mib) << 20);
    set_limit(RLIMIT_CORE, 0);
    set_limit(RLIMIT_FSIZE, 16u << 20);
    if (::chdir(dir.c_str()) != 0) ::_exit(126);
    const int out = ::open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    const int err = ::open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (out < 0 || err < 0) ::_exit(126);
    ::dup2(in_pipe[0], 0);
    ::dup2(out, 1);
    ::dup2(err, 2);
    ::closefrom(3);
    ::execve(argv[0], argv.data(), envp.data());
    ::_exit(127);
  }
  ::close(in_pipe[0]);
  const std::string line = nonce + "\n";
  [[maybe_unused]] ssize_t n = ::write(in_pipe[1], line.data(), line.size());
  ::close(in_pipe[1]);
  const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(limits.wall_ms);
  int status = 0;
  for (;;) {
    const pid_t w = ::waitpid(pid, &status, WNOHANG);
    if (w == pid) break;
    if (w < 0 && errno != EINTR) break;
    if (std::chrono::steady_clock::now() >= until) {
      ::kill(-pid, SIGKILL);
      ::kill(pid, SIGKILL);
      while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
      }
      r.timed_out = true;
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  ::kill(-pid, SIGKILL);  // whatever the program left running in its group
  const std::string out = read_file(out_path, 1 << 20);
  const std::string err = read_file(err_path, 1 << 16);
  if (WIFEXITED(status)) r.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status) && (WTERMSIG(status) == SIGXCPU || WTERMSIG(status) == SIGKILL)) r.timed_out = true;
  r.syntax_ok = out.rfind("quickfill-syntax-ok\n", 0) == 0;
  r.passed = r.exit_code == 0 && out.find("\nquickfill-passed " + nonce + "\n") != std::string::npos;
  if (!r.passed) {
    if (r.timed_out) r.error = "timed out";
    else if (r.exit_code == 125) r.error = "could not enter the network namespace";
    else if (r.exit_code == 127) r.error = "cannot run " + python;
    else r.error = tail_lines(err, 3);
    if (r.error.empty()) r.error = r.exit_code == 0 ? "exited before check() returned" : "no output";
  }
  return r;
}

}  // namespace qf::cli
