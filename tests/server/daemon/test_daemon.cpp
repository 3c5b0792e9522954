// The daemon end to end: the real quickfill binary as bridges (`quickfill
// --stdio`, as editors start it) in front of one daemon, each test in a
// private --socket-dir. Clients typing at once, a client killed mid-request,
// racing starts, the daemon killed and the session replayed, another uid
// refused, a version mismatch, the idle exit, the directory's and socket's
// modes, and the ways to stay in-process.
#include <gtest/gtest.h>

#include <dirent.h>
#include <fcntl.h>
#include <sys/fsuid.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <boost/json.hpp>

#include "lsp/client/lsp_client.h"
#include "lsp/transport.h"
#include "server/daemon/handshake.h"
#include "server/daemon/socket_dir.h"
#include "tests/server/daemon/daemon_editor.h"

namespace json = boost::json;
using namespace std::chrono_literals;
namespace fs = std::filesystem;
using namespace qf::daemon_test;

namespace {

TEST_F(Daemon, ThreeClientsTypingAtOnceAllGetAnswersFromOneDaemon) {
  std::vector<std::unique_ptr<editor>> eds;
  for (int i = 0; i < 3; ++i) {
    eds.push_back(std::make_unique<editor>());
    ASSERT_TRUE(eds.back()->start(dir_));
  }
  EXPECT_EQ(daemons_of(dir_).size(), 1u);
  std::atomic<int> answered{0}, failed{0};
  std::vector<std::thread> typing;
  for (int i = 0; i < 3; ++i)
    typing.emplace_back([&, i] {
      editor& e = *eds[i];
      const std::string uri = "file:///w" + std::to_string(i) + ".py";
      e.open(uri, "def add(a, b):\n    return ");
      for (int k = 0; k < 6; ++k) {
        e.type(uri, std::string(1, "a+b  x"[k]));
        auto r = e.complete(uri);
        (has_result(r) ? answered : failed)++;
      }
    });
  for (auto& t : typing) t.join();
  EXPECT_EQ(answered.load(), 18);
  EXPECT_EQ(failed.load(), 0);
  EXPECT_EQ(daemons_of(dir_).size(), 1u);
  for (auto& e : eds) {
    e->shutdown();
    EXPECT_EQ(e->wait_exit(), 0);
  }
}


TEST_F(Daemon, StatusNamesTheDaemonAndTheSessionsSharingItsModel) {
  editor a, b;
  ASSERT_TRUE(a.start(dir_));
  ASSERT_TRUE(b.start(dir_));
  const auto pids = daemons_of(dir_);
  ASSERT_EQ(pids.size(), 1u);
  for (editor* e : {&a, &b}) {
    const json::value d = daemon_status(*e);
    ASSERT_TRUE(d.is_object()) << json::serialize(d);
    EXPECT_EQ(d.at("pid").to_number<std::int64_t>(), pids[0]);
    EXPECT_EQ(d.at("socket").as_string(), dir_ + "/daemon.sock");
    EXPECT_EQ(d.at("sessions").to_number<std::int64_t>(), 2);
    EXPECT_EQ(d.at("engines").to_number<std::int64_t>(), 1);
    EXPECT_EQ(d.at("sessionsOnEngine").to_number<std::int64_t>(), 2);
  }
  b.shutdown();
  EXPECT_EQ(b.wait_exit(), 0);
  json::value last;
  EXPECT_TRUE(wait_until(
      [&] {
        last = daemon_status(a);
        return last.is_object() && last.at("sessions").to_number<std::int64_t>() == 1 &&
               last.at("sessionsOnEngine").to_number<std::int64_t>() == 1;
      },
      10s))
      << json::serialize(last);
  a.shutdown();
  EXPECT_EQ(a.wait_exit(), 0);
}

TEST_F(Daemon, ClientKilledMidRequestDoesNotDisturbOthers) {
  editor a, b;
  ASSERT_TRUE(a.start(dir_));
  ASSERT_TRUE(b.start(dir_));
  a.open("file:///a.py", "import os\nprint(os.");
  b.open("file:///b.py", "def f(x):\n    return x");
  for (int i = 0; i < 3; ++i) a.send_request("textDocument/completion", a.at_end("file:///a.py"));
  a.kill();
  for (int i = 0; i < 3; ++i) {
    b.type("file:///b.py", " ");
    EXPECT_TRUE(has_result(b.complete("file:///b.py"))) << "completion " << i;
  }
  EXPECT_EQ(daemons_of(dir_).size(), 1u);
  b.shutdown();
  EXPECT_EQ(b.wait_exit(), 0);
}

TEST_F(Daemon, BridgesRacingToStartEndWithOneDaemon) {
  std::vector<std::unique_ptr<editor>> eds(3);
  std::vector<std::thread> starts;
  std::atomic<int> ok{0};
  for (auto& e : eds) {
    e = std::make_unique<editor>();
    starts.emplace_back([&, p = e.get()] { ok += p->start(dir_) ? 1 : 0; });
  }
  for (auto& t : starts) t.join();
  EXPECT_EQ(ok.load(), 3);
  EXPECT_EQ(daemons_of(dir_).size(), 1u);
  EXPECT_EQ(pid_file(dir_), daemons_of(dir_).empty() ? -1 : daemons_of(dir_)[0]);
  for (auto& e : eds) e->shutdown();
}

TEST_F(Daemon, KilledDaemonIsRestartedAndTheSessionReplayed) {
  editor e;
  ASSERT_TRUE(e.start(dir_));
  const pid_t first = pid_file(dir_);
  ASSERT_TRUE(alive(first));
  const std::string uri = "file:///replay.py";
  e.open(uri, "def unusual_marker_name(value):\n    return value");
  e.type(uri, " + 1");
  ASSERT_TRUE(has_result(e.complete(uri)));
  // A request in flight when the daemon dies.
  const std::int64_t inflight = e.send_request("textDocument/completion", e.at_end(uri));
  ::kill(first, SIGKILL);
  auto r = e.response(inflight);
  ASSERT_TRUE(r) << "the request in flight was never answered";
  // Either it was answered before the kill, or it got the one error.
  if (!has_result(r)) {
    EXPECT_EQ(r->at("error").at("code").as_int64(), -32803);
  }
  ASSERT_TRUE(e.wait_loaded()) << "the daemon did not come back";
  const pid_t second = pid_file(dir_);
  EXPECT_NE(second, first);
  EXPECT_TRUE(alive(second));
  // The document is there with the text typed before the restart...
  auto ex = e.call("quickfill/explainCompletion", e.at_end(uri));
  ASSERT_TRUE(has_result(ex)) << (ex ? json::serialize(*ex) : "no answer");
  std::string prompt(ex->at("result").at("prompt").as_string());
  // (the cursor's line may sit in the prompt's middle part, apart from the lines above it)
  EXPECT_NE(prompt.find("def unusual_marker_name(value):"), std::string::npos) << prompt;
  EXPECT_NE(prompt.find("    return value + 1"), std::string::npos) << prompt;
  // ...and edits after it apply on top.
  e.type(uri, " * 2");
  ASSERT_TRUE(has_result(e.complete(uri)));
  ex = e.call("quickfill/explainCompletion", e.at_end(uri));
  ASSERT_TRUE(has_result(ex));
  prompt = std::string(ex->at("result").at("prompt").as_string());
  EXPECT_NE(prompt.find("return value + 1 * 2"), std::string::npos) << prompt;
  // No other error reached the editor: every queued message is a notification.
  while (auto m = e.client().next(100ms))
    EXPECT_FALSE(m->body.as_object().contains("error")) << json::serialize(m->body);
  e.shutdown();
  EXPECT_EQ(e.wait_exit(), 0);
}

// Connects to the socket as uid 65534 (euid, as SO_PEERCRED reports it) while
// path lookups still run as root (fsuid 0), so the directory's mode does not
// stop it first. Exit 0: refused by the daemon; 1: served; 2: could not connect.
int connect_as_nobody(const std::string& socket, bool keep_fs_root) {
  const pid_t child = ::fork();
  if (child == 0) {
    if (::setresgid(65534, 65534, 0) != 0 || ::setresuid(65534, 65534, 0) != 0) _exit(3);
    if (keep_fs_root) ::setfsuid(0);
    const int fd = qf::server::daemon::connect_unix(socket);
    if (fd < 0) _exit(2);
    qf::server::daemon::hello h;
    h.version = qf::server::daemon::protocol_version();
    const std::string line = qf::server::daemon::encode_hello(h);
    (void)!::send(fd, line.data(), line.size(), MSG_NOSIGNAL);
    std::string reply;
    char c;
    while (::recv(fd, &c, 1, 0) == 1 && c != '\n') reply.push_back(c);
    std::string error;
    auto r = qf::server::daemon::decode_reply(reply, &error);
    _exit(r && r->ok ? 1 : 0);
  }
  int status = 0;
  ::waitpid(child, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

TEST_F(Daemon, ConnectionFromAnotherUidIsRefused) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to act as another uid";
  editor e;
  ASSERT_TRUE(e.start(dir_));
  // The daemon itself refuses uid 65534 (SO_PEERCRED)...
  EXPECT_EQ(connect_as_nobody(dir_ + "/daemon.sock", true), 0) << "uid 65534 was served";
  // ...and without root's path access the directory alone keeps uid 65534 out.
  EXPECT_EQ(connect_as_nobody(dir_ + "/daemon.sock", false), 2);
  // The daemon keeps serving its user.
  e.open("file:///u.py", "x = ");
  EXPECT_TRUE(has_result(e.complete("file:///u.py")));
  e.shutdown();
}

TEST_F(Daemon, VersionMismatchDrainsTheOldDaemonAndStartsANewOne) {
  ::setenv("QUICKFILL_DAEMON_VERSION", "0.0.0-old", 1);
  editor old_editor;
  const bool started = old_editor.start(dir_);
  ::unsetenv("QUICKFILL_DAEMON_VERSION");
  ASSERT_TRUE(started);
  const pid_t old_daemon = pid_file(dir_);
  ASSERT_TRUE(alive(old_daemon));
  editor new_editor;
  ASSERT_TRUE(new_editor.start(dir_));
  const pid_t new_daemon = pid_file(dir_);
  EXPECT_NE(new_daemon, old_daemon);
  EXPECT_TRUE(alive(new_daemon));
  // The old daemon keeps its client until it leaves.
  EXPECT_TRUE(alive(old_daemon));
  old_editor.open("file:///o.py", "y = ");
  EXPECT_TRUE(has_result(old_editor.complete("file:///o.py")));
  new_editor.open("file:///n.py", "z = ");
  EXPECT_TRUE(has_result(new_editor.complete("file:///n.py")));
  old_editor.shutdown();
  EXPECT_EQ(old_editor.wait_exit(), 0);
  EXPECT_TRUE(wait_until([&] { return daemons_of(dir_).size() == 1; }, 20s)) << "the old daemon did not exit";
  EXPECT_TRUE(alive(new_daemon));
  // The socket now belongs to the new daemon: a third editor joins it.
  editor third;
  ASSERT_TRUE(third.start(dir_));
  EXPECT_EQ(pid_file(dir_), new_daemon);
  third.shutdown();
  new_editor.shutdown();
}

TEST_F(Daemon, ExitsAfterTheIdleTimeout) {
  editor e;
  ASSERT_TRUE(e.start(dir_, {"--idle-timeout", "1"}));
  const pid_t d = pid_file(dir_);
  ASSERT_TRUE(alive(d));
  e.shutdown();
  EXPECT_EQ(e.wait_exit(), 0);
  EXPECT_TRUE(wait_until([&] { return daemons_of(dir_).empty(); }, 20s));
  EXPECT_FALSE(fs::exists(dir_ + "/daemon.sock"));
}

TEST_F(Daemon, IdleTimeoutComesFromTheSettingWithoutTheFlag) {
  editor e;
  ASSERT_TRUE(e.start(dir_, {}, json::object{{"daemon", json::object{{"idleTimeoutSeconds", 1}}}}));
  e.shutdown();
  EXPECT_EQ(e.wait_exit(), 0);
  EXPECT_TRUE(wait_until([&] { return daemons_of(dir_).empty(); }, 20s));
}

// The daemon outlives the folder it was started from (an editor's, often a
// repository): it works in /, and a relative --model reaches it made absolute
// by the bridge.
TEST_F(Daemon, WorksInTheRootFolderAndGetsAbsoluteModelPaths) {
  const fs::path model = fs::absolute(model_path());
  const fs::path expected = fs::canonical(model.parent_path()) / model.filename();
  const fs::path old = fs::current_path();
  fs::current_path(model.parent_path());
  editor e;
  const bool started = e.start(dir_, {"--model", "./" + model.filename().string()});
  fs::current_path(old);
  ASSERT_TRUE(started);
  const auto pids = daemons_of(dir_);
  ASSERT_EQ(pids.size(), 1u);
  std::error_code ec;
  EXPECT_EQ(fs::read_symlink("/proc/" + std::to_string(pids[0]) + "/cwd", ec), fs::path("/")) << ec.message();
  auto st = e.call("quickfill/status", nullptr);
  ASSERT_TRUE(has_result(st));
  EXPECT_EQ(std::string(st->at("result").at("modelPath").as_string()), expected.string());
  e.shutdown();
}

TEST_F(Daemon, SocketAndDirectoryArePrivate) {
  editor e;
  ASSERT_TRUE(e.start(dir_));
  struct stat st {};
  ASSERT_EQ(::lstat(dir_.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
  ASSERT_EQ(::lstat((dir_ + "/daemon.sock").c_str(), &st), 0);
  EXPECT_TRUE(S_ISSOCK(st.st_mode));
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  EXPECT_EQ(st.st_uid, ::geteuid());
  e.shutdown();
}

TEST_F(Daemon, OpenOrSymlinkedDirectoryIsRefused) {
  const std::string open_dir = dir_ + "/open";
  ASSERT_EQ(::mkdir(open_dir.c_str(), 0755), 0);
  ::chmod(open_dir.c_str(), 0755);
  const std::string link = dir_ + "/link";
  ASSERT_EQ(::symlink(dir_.c_str(), link.c_str()), 0);
  for (const std::string& d : {open_dir, link}) {
    const std::string cmd = std::string(QUICKFILL_BIN) + " daemon --socket-dir " + d + " --idle-timeout 1 2>" + dir_ +
                            "/refused.txt";
    const int rc = std::system(cmd.c_str());
    EXPECT_TRUE(WIFEXITED(rc) && WEXITSTATUS(rc) == 2) << d;
    std::ifstream f(dir_ + "/refused.txt");
    std::string s((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    EXPECT_NE(s.find("refusing"), std::string::npos) << s;
    EXPECT_FALSE(fs::exists(d + "/daemon.sock"));
  }
}

TEST_F(Daemon, InProcessModesStartNoDaemon) {
  {
    editor e;  // --no-daemon
    ASSERT_TRUE(e.start(dir_, {"--no-daemon"}));
    e.open("file:///p.py", "q = ");
    EXPECT_TRUE(has_result(e.complete("file:///p.py")));
    EXPECT_TRUE(daemon_status(e).is_null()) << json::serialize(daemon_status(e));  // the model is its own
    e.shutdown();
  }
  {
    ::setenv("QUICKFILL_NO_DAEMON", "1", 1);
    editor e;
    const bool ok = e.start(dir_);
    ::unsetenv("QUICKFILL_NO_DAEMON");
    ASSERT_TRUE(ok);
    e.shutdown();
  }
  {
    editor e;  // daemon.enabled = false in initializationOptions
    ASSERT_TRUE(e.start(dir_, {}, json::object{{"daemon", json::object{{"enabled", false}}}}));
    e.open("file:///p.py", "q = ");
    EXPECT_TRUE(has_result(e.complete("file:///p.py")));
    e.shutdown();
  }
  EXPECT_TRUE(daemons_of(dir_).empty());
  EXPECT_FALSE(fs::exists(dir_ + "/daemon.sock"));
}

TEST_F(Daemon, ForegroundDaemonRefusesASecondOne) {
  editor e;
  ASSERT_TRUE(e.start(dir_));
  const std::string cmd = std::string(QUICKFILL_BIN) + " daemon --socket-dir " + dir_ + " 2>/dev/null";
  const int rc = std::system(cmd.c_str());
  EXPECT_TRUE(WIFEXITED(rc) && WEXITSTATUS(rc) == 1);
  EXPECT_EQ(daemons_of(dir_).size(), 1u);
  e.shutdown();
}

// ---- a daemon started by the test, and raw connections to it ----

// `quickfill daemon --socket-dir DIR ...` in the foreground (a child of the
// test, logging to DIR/daemon.log); its pid once its socket answers, -1 if
// it never does.
pid_t start_daemon(const std::string& dir, const std::vector<std::string>& extra) {
  std::vector<std::string> args{QUICKFILL_BIN, "daemon", "--socket-dir", dir, "--idle-timeout", "60",
                                "--log-file", dir + "/daemon.log", "--log-level", "debug"};
  args.insert(args.end(), extra.begin(), extra.end());
  const pid_t child = ::fork();
  if (child == 0) {
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    const int null = ::open("/dev/null", O_RDWR);
    ::dup2(null, 0);
    ::dup2(null, 1);
    ::execv(QUICKFILL_BIN, argv.data());
    _exit(127);
  }
  const bool up = wait_until(
      [&] {
        const int fd = qf::server::daemon::connect_unix(dir + "/daemon.sock");
        if (fd < 0) return false;
        ::close(fd);
        return true;
      },
      20s);
  return up ? child : -1;
}

// Connects and sends `hello_line`; the daemon's reply line ("" when none) and
// the connection in *fd (closed unless asked for).
std::string greet(const std::string& dir, const std::string& hello_line, int* keep_fd = nullptr) {
  const int fd = qf::server::daemon::connect_unix(dir + "/daemon.sock");
  if (fd < 0) return "";
  (void)!::send(fd, hello_line.data(), hello_line.size(), MSG_NOSIGNAL);
  std::string reply;
  char c;
  while (::recv(fd, &c, 1, 0) == 1 && c != '\n') reply.push_back(c);
  if (keep_fd) *keep_fd = fd;
  else ::close(fd);
  return reply;
}

std::string our_hello() {
  qf::server::daemon::hello h;
  h.version = qf::server::daemon::protocol_version();
  h.pid = ::getpid();
  h.args.model_path = model_path();
  h.args.threads = 1;
  return qf::server::daemon::encode_hello(h);
}

bool reply_ok(const std::string& reply) {
  std::string error;
  auto r = qf::server::daemon::decode_reply(reply, &error);
  return r && r->ok;
}

// CPU seconds (user + system) a process has used so far.
double cpu_seconds(pid_t pid) {
  const std::string stat = proc_file(pid, "stat");
  const std::size_t close = stat.rfind(')');
  if (close == std::string::npos) return -1;
  std::istringstream in(stat.substr(close + 2));
  std::string field;
  unsigned long long utime = 0, stime = 0;
  for (int i = 3; i <= 15 && in >> field; ++i) {  // fields 14 and 15 of /proc/PID/stat
    if (i == 14) utime = std::stoull(field);
    if (i == 15) stime = std::stoull(field);
  }
  return static_cast<double>(utime + stime) / static_cast<double>(::sysconf(_SC_CLK_TCK));
}

std::string file_text(const std::string& path) {
  std::ifstream f(path);
  return std::string((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
}

void reap(pid_t child) {
  if (child <= 0) return;
  ::kill(child, SIGTERM);
  int status = 0;
  ::waitpid(child, &status, 0);
}

TEST_F(Daemon, ClientThatStopsReadingCostsTheDaemonNoCpuAndIsDropped) {
  const pid_t d = start_daemon(dir_, {"--client-timeout", "5"});
  ASSERT_GT(d, 0) << "the daemon did not start";
  int fd = -1;
  ASSERT_TRUE(reply_ok(greet(dir_, our_hello(), &fd)));
  // Requests whose answers are big (each error echoes its 32 KiB id) and
  // that need no model: before initialize every request is refused. Sent from
  // a thread (the daemon stops reading once its output is stuck); the answers
  // are never read.
  std::atomic<bool> sending{true};
  std::thread sender([&] {
    const std::string id(32 * 1024, 'i');
    for (int i = 0; i < 400 && sending; ++i) {
      const std::string frame = qf::lsp::frame_message(R"({"jsonrpc":"2.0","id":")" + id + std::to_string(i) +
                                                       R"(","method":"quickfill/status"})");
      if (::send(fd, frame.data(), frame.size(), MSG_NOSIGNAL) != static_cast<ssize_t>(frame.size())) break;
    }
  });
  // Let the socket's buffers fill: the session is now waiting to write.
  std::this_thread::sleep_for(1500ms);
  const double cpu0 = cpu_seconds(d);
  const auto t0 = std::chrono::steady_clock::now();
  std::this_thread::sleep_for(2s);
  const double cpu1 = cpu_seconds(d);
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  ASSERT_GE(cpu0, 0);
  EXPECT_LT(cpu1 - cpu0, 0.2 * wall) << "the daemon used " << cpu1 - cpu0 << " s of CPU in " << wall
                                     << " s with a client that does not read";
  // The client is dropped after --client-timeout, with a line in the log...
  EXPECT_TRUE(wait_until([&] { return file_text(dir_ + "/daemon.log").find("has read nothing for 5 s") != std::string::npos; },
                         20s))
      << file_text(dir_ + "/daemon.log");
  EXPECT_TRUE(wait_until([&] { return file_text(dir_ + "/daemon.log").find("session 1 ended") != std::string::npos; },
                         20s));
  sending = false;
  ::shutdown(fd, SHUT_RDWR);
  sender.join();
  ::close(fd);
  // ...and the daemon serves others as before.
  EXPECT_TRUE(alive(d));
  editor e;
  ASSERT_TRUE(e.start(dir_));
  EXPECT_EQ(pid_file(dir_), d);
  e.open("file:///after.py", "x = ");
  EXPECT_TRUE(has_result(e.complete("file:///after.py")));
  e.shutdown();
  EXPECT_EQ(e.wait_exit(), 0);
  reap(d);
}

TEST_F(Daemon, ConnectionsAndHellosOverTheCapsAreRefusedAndOthersServed) {
  const pid_t d = start_daemon(dir_, {"--max-sessions", "1"});
  ASSERT_GT(d, 0) << "the daemon did not start";
  int first = -1;
  ASSERT_TRUE(reply_ok(greet(dir_, our_hello(), &first)));
  // A second session is over --max-sessions.
  std::string r = greet(dir_, our_hello());
  EXPECT_FALSE(reply_ok(r));
  EXPECT_NE(r.find("--max-sessions"), std::string::npos) << r;
  // Hellos over a cap: threads, a string's size, the line's size.
  json::object h = json::parse(our_hello()).as_object();
  h["threads"] = 100000;
  r = greet(dir_, json::serialize(h) + "\n");
  EXPECT_NE(r.find("threads 100000 is over the daemon's cap"), std::string::npos) << r;
  h = json::parse(our_hello()).as_object();
  h["model"] = std::string(5000, 'm');
  r = greet(dir_, json::serialize(h) + "\n");
  EXPECT_NE(r.find("\"model\\\" is longer than"), std::string::npos) << r;
  r = greet(dir_, std::string(100 * 1024, 'x'));  // no line end within the cap
  EXPECT_NE(r.find("the hello is longer than 16384 bytes"), std::string::npos) << r;
  // The session it holds is served all along.
  const std::string status = qf::lsp::frame_message(R"({"jsonrpc":"2.0","id":1,"method":"quickfill/status"})");
  ASSERT_EQ(::send(first, status.data(), status.size(), MSG_NOSIGNAL), static_cast<ssize_t>(status.size()));
  qf::lsp::fd_reader reader(first);
  const qf::lsp::read_result answer = reader.read_message();
  ASSERT_EQ(answer.what, qf::lsp::read_result::kind::message) << answer.error;
  EXPECT_EQ(json::parse(answer.body).at("id"), json::value(1));  // (not initialized: an error, but an answer)
  // Once it leaves, another is taken.
  ::close(first);
  EXPECT_TRUE(wait_until([&] { return reply_ok(greet(dir_, our_hello())); }, 10s));
  EXPECT_TRUE(alive(d));
  reap(d);
}

TEST_F(Daemon, BridgeFallsBackInProcessWhenTheDaemonNeverAnswersTheHandshake) {
  // A "daemon" that accepts (the kernel queues the connection) and never answers.
  const int silent = ::socket(AF_UNIX, SOCK_STREAM, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  const std::string path = dir_ + "/daemon.sock";
  std::snprintf(addr.sun_path, sizeof addr.sun_path, "%s", path.c_str());
  ASSERT_EQ(::bind(silent, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  ASSERT_EQ(::listen(silent, 8), 0);
  editor e;
  const auto t0 = std::chrono::steady_clock::now();
  ASSERT_TRUE(e.start(dir_));
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 50s);
  EXPECT_TRUE(daemon_status(e).is_null()) << json::serialize(daemon_status(e));  // in process
  e.open("file:///h.py", "y = ");
  EXPECT_TRUE(has_result(e.complete("file:///h.py")));
  e.shutdown();
  EXPECT_EQ(e.wait_exit(), 0);
  std::string logs;
  for (const auto& f : fs::directory_iterator(dir_))
    if (f.path().filename().string().rfind("bridge-", 0) == 0) logs += file_text(f.path());
  EXPECT_NE(logs.find("did not answer the handshake within 5 s"), std::string::npos) << logs;
  ::close(silent);
}

TEST_F(Daemon, BridgeRefusesADaemonOfAnotherUid) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to act as another uid";
  // A listener of uid 65534 on our socket path (it got there with root's
  // filesystem uid, as in ConnectionFromAnotherUidIsRefused).
  int ready[2];
  ASSERT_EQ(::pipe(ready), 0);
  const pid_t other = ::fork();
  if (other == 0) {
    if (::setresgid(65534, 65534, 0) != 0 || ::setresuid(65534, 65534, 0) != 0) _exit(3);
    ::setfsuid(0);
    const int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::snprintf(addr.sun_path, sizeof addr.sun_path, "%s/daemon.sock", dir_.c_str());
    if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 || ::listen(fd, 8) != 0) _exit(4);
    (void)!::write(ready[1], "r", 1);
    for (;;) {  // answers every hello with ok
      const int c = ::accept(fd, nullptr, nullptr);
      if (c < 0) continue;
      const std::string ok = qf::server::daemon::encode_reply({true, qf::server::daemon::protocol_version(), 1, ""});
      (void)!::write(c, ok.data(), ok.size());
    }
  }
  char c = 0;
  ASSERT_EQ(::read(ready[0], &c, 1), 1) << "the other uid's listener did not start";
  editor e;
  const bool started = e.start(dir_);
  ::kill(other, SIGKILL);
  ::waitpid(other, nullptr, 0);
  ASSERT_TRUE(started);
  EXPECT_TRUE(daemon_status(e).is_null()) << json::serialize(daemon_status(e));  // in process
  e.shutdown();
  EXPECT_EQ(e.wait_exit(), 0);
  std::string logs;
  for (const auto& f : fs::directory_iterator(dir_))
    if (f.path().filename().string().rfind("bridge-", 0) == 0) logs += file_text(f.path());
  EXPECT_NE(logs.find("it is served by uid 65534, not by uid 0"), std::string::npos) << logs;
  ::close(ready[0]);
  ::close(ready[1]);
}

TEST_F(Daemon, DocumentOpenThroughTwoDaemonCrashesIsQuarantinedAndTheUserTold) {
  editor e;
  ASSERT_TRUE(e.start(dir_));
  const std::string bad = "file:///crashes.py", good = "file:///fine.py";
  e.open(bad, "def f():\n    return ");
  ASSERT_TRUE(has_result(e.complete(bad)));
  for (int crash = 0; crash < 2; ++crash) {
    const pid_t d = pid_file(dir_);
    ASSERT_TRUE(alive(d));
    ::kill(d, SIGKILL);
    ASSERT_TRUE(wait_until([&] { return pid_file(dir_) != d && alive(pid_file(dir_)); }, 30s));
    ASSERT_TRUE(e.wait_loaded()) << "the daemon did not come back";
  }
  // The editor is told which document, once.
  int told = 0;
  while (auto m = e.client().next(500ms)) {
    const json::object& o = m->body.as_object();
    if (o.contains("method") && o.at("method") == json::value("window/showMessage") &&
        std::string(o.at("params").at("message").as_string()).find(bad) != std::string::npos)
      ++told;
  }
  EXPECT_EQ(told, 1);
  // No completions for it (a clear error naming it); the session goes on.
  auto r = e.complete(bad);
  ASSERT_TRUE(r);
  ASSERT_TRUE(r->as_object().contains("error")) << json::serialize(*r);
  EXPECT_NE(std::string(r->at("error").at("message").as_string()).find(bad), std::string::npos);
  e.open(good, "x = ");
  EXPECT_TRUE(has_result(e.complete(good)));
  // The new daemon never saw it.
  auto ex = e.call("quickfill/explainCompletion", e.at_end(good));
  ASSERT_TRUE(has_result(ex));
  EXPECT_EQ(json::serialize(*ex).find("crashes.py"), std::string::npos);
  e.shutdown();
  EXPECT_EQ(e.wait_exit(), 0);
}

TEST_F(Daemon, NumberOutOfRangeNeverReachesStdoutOrAReplayAsInfinity) {
  editor e;
  // 1e400 in initializationOptions: replayed to a new daemon after a crash.
  ASSERT_TRUE(e.start_raw(dir_, R"({"completion":{"autoDeadlineMs":60000,"explicitDeadlineMs":60000,)"
                                R"("maxTokensExplicit":8,"maxTokensAuto":8},"unused":1e400})"));
  const std::string uri = "file:///n.py";
  e.open(uri, "value = 1\n");
  // A didChange, a request and settings carrying 1e400 (and -1e400).
  e.send_raw_body(R"({"jsonrpc":"2.0","method":"textDocument/didChange","params":{"textDocument":{"uri":")" + uri +
                  R"(","version":2},"extra":1e400,"contentChanges":[{"range":{"start":{"line":1,"character":0},)"
                  R"("end":{"line":1,"character":0}},"text":"other = ","weight":-1e400}]}})");
  e.send_raw_body(R"({"jsonrpc":"2.0","id":901,"method":"quickfill/status","params":{"x":1e400}})");
  auto st = e.response(901, 10s);
  EXPECT_TRUE(has_result(st)) << (st ? json::serialize(*st) : "no answer");
  e.send_raw_body(R"({"jsonrpc":"2.0","id":902,"method":"textDocument/completion","params":{"textDocument":)"
                  R"({"uri":")" + uri + R"("},"position":{"line":1,"character":1e400}}})");
  auto bad = e.response(902, 10s);
  ASSERT_TRUE(bad);  // a clear error (a null where a number was needed), not silence
  EXPECT_TRUE(bad->as_object().contains("error")) << json::serialize(*bad);
  ASSERT_TRUE(has_result(e.complete(uri)));
  // The daemon crashes: the session (initialize included) is replayed.
  const pid_t d = pid_file(dir_);
  ::kill(d, SIGKILL);
  ASSERT_TRUE(wait_until([&] { return pid_file(dir_) != d && alive(pid_file(dir_)); }, 30s));
  ASSERT_TRUE(e.wait_loaded()) << "the replayed session did not come up";
  auto ex = e.call("quickfill/explainCompletion", e.at_end(uri));
  ASSERT_TRUE(has_result(ex)) << (ex ? json::serialize(*ex) : "no answer");
  EXPECT_NE(std::string(ex->at("result").at("prompt").as_string()).find("other = "), std::string::npos);
  ASSERT_TRUE(has_result(e.complete(uri)));
  e.shutdown();
  EXPECT_EQ(e.wait_exit(), 0);
  // Every byte the editor got was JSON.
  EXPECT_TRUE(e.client().bad_output().empty()) << e.client().bad_output().front();
  // And the new daemon got a JSON initialize (no parse error in its log).
  const std::string log = file_text(dir_ + "/daemon.log");
  EXPECT_EQ(log.find("invalid JSON"), std::string::npos) << log;
}

}  // namespace
