// quickfill_test_daemon: the real daemon (run_daemon: socket, handshakes,
// sessions, the shared engine pool, the step loop, each session's real
// pipeline) with the scripted model of the pipeline tests as its engine
// (scripted_engine.h: an eval of a "BLOCK" document is held until it is
// cancelled), so that the daemon's tests can hold a request while a window is
// killed. Started as `quickfill_test_daemon daemon --socket-dir DIR
// [options]`; real bridges (`quickfill --stdio` of the same build, hence the
// same protocol version) connect to it. The engine's sequences coming and
// going and its held evals are appended as lines to DIR/provider.log
// (written and closed at once, so that tests can wait on it). Test-only;
// never installed.
#include <csignal>
#include <cstdio>
#include <cstring>
#include <memory>
#include <mutex>
#include <span>
#include <string>

#include "server/core/logging.h"
#include "server/core/server_args.h"
#include "server/daemon/daemon_server.h"
#include "tests/server/daemon/scripted_engine.h"

int main(int argc, char** argv) {
  std::signal(SIGPIPE, SIG_IGN);
  std::span<char*> args(argv + 1, argc > 1 ? argc - 1 : 0);
  if (!args.empty() && std::strcmp(args[0], "daemon") == 0) args = args.subspan(1);
  qf::server::server_args opts;
  std::string error;
  if (!qf::server::parse_server_args(args, opts, &error)) {
    std::fprintf(stderr, "quickfill_test_daemon: %s\n", error.c_str());
    return 2;
  }
  if (!qf::server::setup_logging(opts.log_level, opts.log_file, &error)) {
    std::fprintf(stderr, "quickfill_test_daemon: %s\n", error.c_str());
    return 2;
  }
  const std::string log = opts.socket_dir + "/provider.log";
  auto mu = std::make_shared<std::mutex>();
  auto say = [log, mu](const std::string& line) {
    std::lock_guard<std::mutex> lock(*mu);
    if (std::FILE* f = std::fopen(log.c_str(), "a")) {
      std::fprintf(f, "%s\n", line.c_str());
      std::fclose(f);
    }
  };
  qf::server::daemon::engine_loaders engines = qf::server::daemon::model_loaders();
  engines.load_backend = [say](const qf::server::provider_options&, std::string*) {
    auto e = std::make_shared<qf::daemon_test::scripted_engine>();
    e->say = say;
    return e;
  };
  return qf::server::daemon::run_daemon(opts, {}, engines);
}
