// The daemon end to end, as the tests see it: an editor (the real quickfill
// binary as a bridge, `quickfill --stdio`, and its LSP conversation), the
// daemons serving a --socket-dir found in /proc, and the Daemon fixture (a
// private socket directory per test, its daemons killed and its logs printed
// on failure). Used by test_daemon.cpp and test_daemon_load.cpp (one fixture
// class for both, so their tests form one suite).
#pragma once

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
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
#include <string>
#include <thread>
#include <vector>

#include <boost/json.hpp>
#include <gtest/gtest.h>

#include "lsp/client/lsp_client.h"
#include "lsp/transport.h"

namespace json = boost::json;
namespace fs = std::filesystem;
using namespace std::chrono_literals;

namespace qf::daemon_test {


inline std::string model_path() {
  if (const char* m = std::getenv("QUICKFILL_TEST_MODEL"); m && *m) return m;
  return QUICKFILL_TEST_MODEL_DEFAULT;
}

// Running, not a zombie (a detached daemon's parent may never reap it).
// A /proc file's contents, empty when the process is gone. Read with
// read(2): a process that exits mid-read makes it fail with ESRCH, which
// std::ifstream turns into an exception.
inline std::string proc_file(pid_t pid, const char* name) {
  std::string out;
  const int fd = ::open(("/proc/" + std::to_string(pid) + "/" + name).c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return out;
  char buf[4096];
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n <= 0) break;
    out.append(buf, static_cast<std::size_t>(n));
  }
  ::close(fd);
  return out;
}

inline bool alive(pid_t pid) {
  if (pid <= 0) return false;
  const std::string stat = proc_file(pid, "stat");
  const std::size_t close = stat.rfind(')');
  return close != std::string::npos && close + 2 < stat.size() && stat[close + 2] != 'Z';
}

// The command line of a process, NUL-separated arguments joined by spaces.
inline std::string cmdline(pid_t pid) {
  std::string s = proc_file(pid, "cmdline");
  for (char& c : s)
    if (c == '\0') c = ' ';
  return s;
}

// The daemons serving `dir`: processes whose command line is
// `quickfill daemon --socket-dir DIR ...` (not zombies).
inline std::vector<pid_t> daemons_of(const std::string& dir) {
  std::vector<pid_t> out;
  const std::unique_ptr<DIR, int (*)(DIR*)> d(::opendir("/proc"), ::closedir);
  if (!d) return out;
  while (dirent* e = ::readdir(d.get())) {
    const pid_t pid = static_cast<pid_t>(std::atoi(e->d_name));
    if (pid <= 0) continue;
    const std::string c = cmdline(pid);
    if (c.find(" daemon --socket-dir " + dir + " ") != std::string::npos) out.push_back(pid);
  }
  return out;
}

inline pid_t pid_file(const std::string& dir) {
  std::ifstream f(dir + "/daemon.pid");
  long p = 0;
  return f >> p ? static_cast<pid_t>(p) : -1;
}

inline bool wait_until(const std::function<bool()>& cond, std::chrono::milliseconds limit) {
  const auto until = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < until) {
    if (cond()) return true;
    std::this_thread::sleep_for(20ms);
  }
  return cond();
}

// One editor: a bridge process and its LSP conversation.
class editor {
 public:
  bool start(const std::string& dir, const std::vector<std::string>& extra = {}, json::object options = {}) {
    std::vector<std::string> argv{QUICKFILL_BIN, "--stdio",   "--socket-dir", dir,    "--model",
                                  model_path(),  "--threads", "1",            "--log-level", "debug"};
    argv.insert(argv.end(), extra.begin(), extra.end());
    qf::lsp::client_options o;
    o.answer_server_requests = true;
    o.stderr_path = dir + "/bridge-" + std::to_string(counter_++) + ".log";
    std::string error;
    if (!c_.start(argv, o, &error)) {
      ADD_FAILURE() << error;
      return false;
    }
    json::object completion{{"autoDeadlineMs", 60000}, {"explicitDeadlineMs", 60000}, {"maxTokensExplicit", 8},
                            {"maxTokensAuto", 8}};
    options["completion"] = completion;
    auto init = call("initialize", json::object{{"processId", nullptr},
                                                {"rootUri", nullptr},
                                                {"capabilities", json::object{}},
                                                {"initializationOptions", options}});
    if (!init || !init->as_object().contains("result")) {
      ADD_FAILURE() << "initialize: " << (init ? json::serialize(*init) : "no answer");
      return false;
    }
    c_.notify("initialized", json::object{});
    return wait_loaded();
  }

  // As start(), with the initialize request's initializationOptions given as
  // raw JSON text (numbers a json::value cannot hold, like 1e400).
  bool start_raw(const std::string& dir, const std::string& init_options_text) {
    std::vector<std::string> argv{QUICKFILL_BIN, "--stdio",   "--socket-dir", dir,    "--model",
                                  model_path(),  "--threads", "1",            "--log-level", "debug"};
    qf::lsp::client_options o;
    o.answer_server_requests = true;
    o.stderr_path = dir + "/bridge-" + std::to_string(counter_++) + ".log";
    std::string error;
    if (!c_.start(argv, o, &error)) {
      ADD_FAILURE() << error;
      return false;
    }
    send_raw_body(R"({"jsonrpc":"2.0","id":900,"method":"initialize","params":{"processId":null,"rootUri":null,)"
                  R"("capabilities":{},"initializationOptions":)" +
                  init_options_text + "}}");
    auto init = response(900);
    if (!init || !init->as_object().contains("result")) {
      ADD_FAILURE() << "initialize: " << (init ? json::serialize(*init) : "no answer");
      return false;
    }
    c_.notify("initialized", json::object{});
    return wait_loaded();
  }
  bool send_raw_body(const std::string& body) { return c_.send_raw(qf::lsp::frame_message(body)); }

  bool wait_loaded() {
    return wait_until(
        [&] {
          auto st = call("quickfill/status", nullptr, 10s);
          if (!st || !st->as_object().contains("result")) return false;
          const json::value& r = st->at("result");
          return !r.at("modelLoading").as_bool() && r.at("modelLoaded").as_bool();
        },
        60s);
  }

  // The whole response (result or error), nullopt without one.
  std::optional<json::value> call(const std::string& method, json::value params,
                                  std::chrono::milliseconds timeout = 60s) {
    const std::int64_t id = c_.request(method, std::move(params));
    auto r = c_.wait_response(id, timeout);
    if (!r) return std::nullopt;
    return r->body;
  }
  std::int64_t send_request(const std::string& method, json::value params) { return c_.request(method, std::move(params)); }
  std::optional<json::value> response(std::int64_t id, std::chrono::milliseconds timeout = 60s) {
    auto r = c_.wait_response(id, timeout);
    if (!r) return std::nullopt;
    return r->body;
  }

  void open(const std::string& uri, const std::string& text) {
    text_[uri] = text;
    version_[uri] = 1;
    c_.notify("textDocument/didOpen", json::object{{"textDocument", json::object{{"uri", uri},
                                                                                 {"languageId", "python"},
                                                                                 {"version", 1},
                                                                                 {"text", text}}}});
  }
  // Appends `s` (ASCII, no newline) at the end of the document.
  void type(const std::string& uri, const std::string& s) {
    auto [line, col] = end_of(uri);
    text_[uri] += s;
    json::object pos{{"line", line}, {"character", col}};
    c_.notify("textDocument/didChange",
              json::object{{"textDocument", json::object{{"uri", uri}, {"version", ++version_[uri]}}},
                           {"contentChanges", json::array{json::object{{"range", json::object{{"start", pos}, {"end", pos}}},
                                                                       {"text", s}}}}});
  }
  json::object at_end(const std::string& uri) {
    auto [line, col] = end_of(uri);
    return json::object{{"textDocument", json::object{{"uri", uri}}},
                        {"position", json::object{{"line", line}, {"character", col}}},
                        {"context", json::object{{"triggerKind", 1}}}};
  }
  std::optional<json::value> complete(const std::string& uri) { return call("textDocument/completion", at_end(uri)); }

  void shutdown() {
    call("shutdown", nullptr, 10s);
    c_.notify("exit", nullptr);
  }
  int wait_exit(std::chrono::milliseconds t = 10s) {
    bool timed_out = false;
    return c_.wait_exit(t, &timed_out);
  }
  pid_t pid() const { return c_.pid(); }
  void kill() { c_.kill_child(); }
  qf::lsp::lsp_client& client() { return c_; }

 private:
  std::pair<std::int64_t, std::int64_t> end_of(const std::string& uri) {
    std::int64_t line = 0, col = 0;
    for (char ch : text_[uri]) ch == '\n' ? (++line, col = 0) : ++col;
    return {line, col};
  }
  static inline std::atomic<int> counter_{0};
  qf::lsp::lsp_client c_;
  std::map<std::string, std::string> text_;
  std::map<std::string, std::int64_t> version_;
};

inline bool has_result(const std::optional<json::value>& r) { return r && r->as_object().contains("result"); }

class Daemon : public ::testing::Test {
 protected:
  void SetUp() override {
    std::signal(SIGPIPE, SIG_IGN);  // a bridge that died must fail the test, not kill it
    ::unsetenv("QUICKFILL_NO_DAEMON");
    ::unsetenv("QUICKFILL_DAEMON_VERSION");
    ::unsetenv("QUICKFILL_SOCKET_DIR");
    if (!fs::exists(model_path())) GTEST_SKIP() << "no model at " << model_path();
    char tmpl[] = "/tmp/qfd-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override {
    if (dir_.empty()) return;
    for (pid_t p : daemons_of(dir_)) ::kill(p, SIGKILL);
    if (::testing::Test::HasFailure()) {
      for (const auto& e : fs::directory_iterator(dir_))
        if (e.path().extension() == ".log") {
          std::ifstream f(e.path());
          std::string s((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
          if (s.size() > 6000) s = s.substr(s.size() - 6000);
          std::printf("---- %s ----\n%s\n", e.path().c_str(), s.c_str());
        }
    }
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  std::string dir_;
};

// quickfill/status's `daemon` member: which daemon serves the session and
// how many sessions share its model.
inline json::value daemon_status(editor& e) {
  auto st = e.call("quickfill/status", nullptr, 10s);
  if (!st || !st->as_object().contains("result")) return json::value("no status");
  return st->at("result").as_object().contains("daemon") ? st->at("result").at("daemon") : json::value("absent");
}

// Waits until e's daemon reports exactly one session, on one engine; true
// when it does within `limit`. `last` gets the last status read.
inline bool wait_for_one_session(editor& e, std::chrono::milliseconds limit, json::value& last) {
  return wait_until(
      [&] {
        last = daemon_status(e);
        return last.is_object() && last.at("sessions").to_number<std::int64_t>() == 1 &&
               last.at("sessionsOnEngine").to_number<std::int64_t>() == 1;
      },
      limit);
}

}  // namespace qf::daemon_test
