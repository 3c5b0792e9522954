// Test helper: a name resolver that never answers, without touching the
// machine's configuration.
//
// The test binary runs itself again as a child for one DISABLED_ test
// (run_stalled_resolver_test()); inside it, enter_stalled_resolver() moves the
// child into a mount namespace of its own (unshare(CLONE_NEWNS), as root) and
// bind-mounts over /etc/resolv.conf a file naming a DNS server on a loopback
// UDP port (127.53.x.y:53) that a socket of the child holds and never answers,
// with "options timeout:30 attempts:1": every getaddrinfo() of a name that is
// not in /etc/hosts then blocks for 30 s inside the real system resolver.
// Only the child sees it; the namespace goes with the child. Where that cannot
// be had (not root, unshare refused, a name service that does not read
// /etc/resolv.conf) the child prints a STALL_SKIP line and the parent test
// skips.
#pragma once

#include <errno.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include "tests/server_process.h"

namespace qf::test {

// A name no hosts file holds: its lookup goes to the (stalled) DNS server.
inline const char* stalled_name = "stall.quickfill.test";
inline const char* stall_skip_marker = "STALL_SKIP: ";

// In the child: "" once name resolution stalls, else why it cannot.
inline std::string enter_stalled_resolver() {
  static std::string state = "unset";
  if (state != "unset") return state;
  auto refuse = [&](const std::string& why) { return state = why; };
  if (::geteuid() != 0) return refuse("not root: cannot make a mount namespace");
  if (::unshare(CLONE_NEWNS) != 0) return refuse(std::string("unshare(CLONE_NEWNS): ") + std::strerror(errno));
  if (::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0)
    return refuse(std::string("cannot make the mounts private: ") + std::strerror(errno));
  // A DNS server that never answers: a bound UDP socket nobody reads.
  std::string address;
  for (int i = 0; i < 50 && address.empty(); ++i) {
    const std::string a = "127.53." + std::to_string(1 + (::getpid() + i) % 250) + "." + std::to_string(1 + i);
    const int s = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    sockaddr_in sa{};
    sa.sin_family = AF_INET;
    sa.sin_port = htons(53);
    ::inet_pton(AF_INET, a.c_str(), &sa.sin_addr);
    if (s >= 0 && ::bind(s, reinterpret_cast<sockaddr*>(&sa), sizeof sa) == 0)
      address = a;  // the socket stays open for the child's life
    else if (s >= 0)
      ::close(s);
  }
  if (address.empty()) return refuse("cannot bind a UDP socket on port 53 of the loopback");
  const std::string conf = (std::filesystem::temp_directory_path() /
                            ("qf_stalled_resolv_" + std::to_string(::getpid()) + ".conf"))
                               .string();
  std::ofstream(conf) << "nameserver " << address << "\noptions timeout:30 attempts:1\n";
  const int rc = ::mount(conf.c_str(), "/etc/resolv.conf", nullptr, MS_BIND, nullptr);
  const int err = errno;
  std::filesystem::remove(conf);  // the mount keeps the file
  if (rc != 0) return refuse(std::string("cannot bind-mount over /etc/resolv.conf: ") + std::strerror(err));
  return state = "";
}

// In the child test: enters the stall, or skips (telling the parent).
#define QF_ENTER_STALLED_RESOLVER()                                                       \
  do {                                                                                    \
    const std::string why_ = ::qf::test::enter_stalled_resolver();                        \
    if (!why_.empty()) {                                                                  \
      std::printf("%s%s\n", ::qf::test::stall_skip_marker, why_.c_str());                 \
      std::fflush(stdout);                                                                \
      GTEST_SKIP() << why_;                                                               \
    }                                                                                     \
  } while (0)

// In the child test, when the resolver answered after all (a name service
// that does not read /etc/resolv.conf): skip rather than pass or fail.
inline void report_resolver_answered(const std::string& what) {
  std::printf("%sthe name service answered (%s): it does not use /etc/resolv.conf here\n", stall_skip_marker,
              what.c_str());
  std::fflush(stdout);
}

// In the parent: runs DISABLED_<suite>.<test> of this binary in a child and
// checks that it passed; skips when the child could not stall its resolver.
inline void run_stalled_resolver_test(const std::string& suite_and_test) {
  const std::string log = (std::filesystem::temp_directory_path() /
                           ("qf_stalled_child_" + std::to_string(::getpid()) + ".log"))
                              .string();
  std::filesystem::remove(log);
  pid_t pid = spawn_child({std::filesystem::read_symlink("/proc/self/exe").string(),
                           "--gtest_also_run_disabled_tests", "--gtest_filter=DISABLED_" + suite_and_test},
                          log);
  ASSERT_GT(pid, 0) << "cannot run this test binary again";
  int status = 0;
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(100);
  while (::waitpid(pid, &status, WNOHANG) == 0) {
    if (std::chrono::steady_clock::now() >= until) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, &status, 0);
      FAIL() << "the child running " << suite_and_test << " hung:\n" << file_text(log);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  const std::string out = file_text(log);
  std::filesystem::remove(log);
  if (const size_t at = out.find(stall_skip_marker); at != std::string::npos)
    GTEST_SKIP() << out.substr(at, out.find('\n', at) - at);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << out;
  EXPECT_NE(out.find("[  PASSED  ] 1 test"), std::string::npos) << out;
}

}  // namespace qf::test
