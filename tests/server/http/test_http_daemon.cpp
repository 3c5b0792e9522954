// `quickfill daemon --http HOST:PORT` (or the daemon.http setting of the user
// config file, when an editor starts the daemon): the per-user daemon also serves the
// HTTP endpoint from its shared engine pool. The real daemon (a private socket
// folder, idle timeout 0, which exits at once without clients) stays up while
// it serves HTTP, answers /infill with a curl, and ends on SIGTERM with status
// 0; `--http` is refused in the LSP mode, which does not serve it.
#include <sys/stat.h>
#include <sys/wait.h>

#include <filesystem>

#include "tests/server/http/http_test_util.h"

using namespace qf::http::testing;
namespace json = boost::json;

TEST(HttpDaemon, ServesHttpFromTheSharedEngines) {
  const std::string dir = test_dir("daemon");
  const std::string sock = dir + "/sock";
  std::filesystem::create_directories(sock);
  ::chmod(sock.c_str(), 0700);
  const int port = qf::test::free_loopback_port();
  // Built by appending: GCC 12 warns, falsely, about `"literal" + std::string` here (-Wrestrict).
  const std::string hostport = std::string("127.0.0.1:").append(std::to_string(port));
  const std::string url = std::string("http://").append(hostport);
  pid_t pid = qf::test::spawn_child({QUICKFILL_BINARY, "daemon", "--socket-dir", sock, "--idle-timeout", "0", "--http",
                                     hostport, "--model", QUICKFILL_TINY_MODEL},
                                    dir + "/daemon.out");
  ASSERT_GT(pid, 0);
  int status = 0;
  for (int i = 0; i < 3000 && status != 200; ++i) {
    ASSERT_FALSE(qf::test::child_exited(pid)) << "the daemon exited: " << qf::test::file_text(dir + "/daemon.out")
                                              << qf::test::file_text(sock + "/daemon.log");
    qf::test::loopback_get(port, "/health", &status);
    if (status != 200) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ASSERT_EQ(status, 200) << qf::test::file_text(sock + "/daemon.log");
  const reply r = curl(dir, url + "/infill", true,
                       json::serialize(llama_vim_fim("def f(x):\n", "    return ", "\n\nprint(f(2))\n")));
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_TRUE(r.json().at("content").is_string()) << r.body;
  EXPECT_FALSE(qf::test::child_exited(pid)) << "idle timeout 0 without LSP clients: the HTTP endpoint keeps it up";
  const std::string log = qf::test::file_text(sock + "/daemon.log") + qf::test::file_text(dir + "/daemon.out");
  EXPECT_NE(log.find(std::string("daemon: serving HTTP on ").append(hostport)), std::string::npos) << log;
  EXPECT_NE(log.find("loading an engine"), std::string::npos) << "the endpoint's model is an engine of the pool: " << log;
  ::kill(pid, SIGTERM);
  int st = 0;
  ASSERT_EQ(::waitpid(pid, &st, 0), pid);
  EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0) << st;
  std::filesystem::remove_all(dir);
}

TEST(HttpDaemon, HttpIsNotAnOptionOfTheLspMode) {
  const std::string dir = test_dir("lsp_mode");
  pid_t pid = qf::test::spawn_child({QUICKFILL_BINARY, "--stdio", "--no-daemon", "--http", "127.0.0.1:1"}, dir + "/out");
  ASSERT_GT(pid, 0);
  int st = 0;
  ASSERT_EQ(::waitpid(pid, &st, 0), pid);
  EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 2);
  EXPECT_NE(qf::test::file_text(dir + "/out").find("options of `quickfill daemon` and `quickfill serve`"), std::string::npos)
      << qf::test::file_text(dir + "/out");
  std::filesystem::remove_all(dir);
}

// The daemon.http setting of the user config file: an editor's `quickfill
// --stdio` starts the daemon with the endpoint on.
TEST(HttpDaemon, SettingInTheUserConfigFileTurnsItOn) {
  const std::string dir = test_dir("setting");
  const std::string sock = dir + "/sock", cfg = dir + "/config";
  std::filesystem::create_directories(sock);
  std::filesystem::create_directories(cfg + "/quickfill");
  ::chmod(sock.c_str(), 0700);
  const int port = qf::test::free_loopback_port();
  const std::string hostport = std::string("127.0.0.1:").append(std::to_string(port));
  std::ofstream(cfg + "/quickfill/config.json") << R"({"daemon": {"http": ")" << hostport << R"("}})";
  std::string cmd = "env -u QUICKFILL_NO_DAEMON QUICKFILL_SOCKET_DIR=";
  cmd.append(shell_quote(sock)).append(" XDG_CONFIG_HOME=").append(shell_quote(cfg)).append(" ");
  cmd.append(shell_quote(QUICKFILL_BINARY)).append(" --stdio --model ").append(shell_quote(QUICKFILL_TINY_MODEL));
  cmd.append(" > ").append(shell_quote(dir + "/bridge.out")).append(" 2>&1");
  FILE* bridge = ::popen(cmd.c_str(), "w");
  ASSERT_NE(bridge, nullptr);
  const std::string init =
      R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"processId":null,"rootUri":null,"capabilities":{}}})";
  std::string frame = "Content-Length: ";
  frame.append(std::to_string(init.size())).append("\r\n\r\n").append(init);
  std::fputs(frame.c_str(), bridge);
  std::fflush(bridge);
  int status = 0;
  for (int i = 0; i < 3000 && status != 200; ++i) {
    qf::test::loopback_get(port, "/health", &status);
    if (status != 200) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  EXPECT_EQ(status, 200) << qf::test::file_text(dir + "/bridge.out") << qf::test::file_text(sock + "/daemon.log");
  ::pclose(bridge);  // the editor goes; the daemon stays for its HTTP clients
  const std::string pid_text = qf::test::file_text(sock + "/daemon.pid");
  const pid_t daemon_pid = static_cast<pid_t>(std::atol(pid_text.c_str()));
  ASSERT_GT(daemon_pid, 0) << "no daemon.pid: " << qf::test::file_text(sock + "/daemon.log");
  EXPECT_NE(qf::test::file_text(sock + "/daemon.log").find("daemon: serving HTTP on " + hostport), std::string::npos)
      << qf::test::file_text(sock + "/daemon.log");
  ::kill(daemon_pid, SIGTERM);
  for (int i = 0; i < 1000 && ::kill(daemon_pid, 0) == 0; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  EXPECT_NE(::kill(daemon_pid, 0), 0) << "the daemon did not end on SIGTERM";
  std::filesystem::remove_all(dir);
}
