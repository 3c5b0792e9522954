// The quickfill executable: the LSP server on stdio by default (in front of
// the per-user daemon, server/daemon/bridge.h), `quickfill daemon`, or one of
// the subcommands declared in server/cli/commands.h. The real completion provider
// (server/completion/pipeline/provider_factory.h) is the only one this binary uses.
#include <csignal>
#include <cstdio>
#include <cstring>
#include <span>
#include <string>

#include "server/cli/cli_args.h"
#include "server/cli/commands.h"
#include "server/cli/serve.h"
#include "server/core/server_args.h"
#include "server/completion/pipeline/provider_factory.h"
#include "server/core/logging.h"
#include "server/core/settings.h"
#include "server/core/user_config.h"
#include "server/daemon/bridge.h"
#include "server/daemon/daemon_server.h"

namespace {

// The subcommands: `quickfill NAME ...` runs the function with the whole argument list.
constexpr qf::cli::subcommand k_subcommands[] = {
    {"demo", qf::cli::cmd_demo},         {"run", qf::cli::cmd_run},       {"perplexity", qf::cli::cmd_perplexity},
    {"bench", qf::cli::cmd_bench},       {"gguf", qf::cli::cmd_gguf},     {"settings", qf::cli::cmd_settings},
    {"prompt", qf::cli::cmd_prompt},     {"model", qf::cli::cmd_model},   {"report", qf::cli::cmd_report},
    {"doctor", qf::cli::cmd_doctor},     {"eval", qf::cli::cmd_eval},     {"serve", qf::cli::cmd_serve},
};

}  // namespace

int main(int argc, char** argv) {
  std::signal(SIGPIPE, SIG_IGN);
  // Logs go to stderr from the very start (spdlog's own default is stdout).
  qf::server::setup_logging("info", "", nullptr);
  std::span<char*> args(argv + 1, argc > 1 ? argc - 1 : 0);
  if (!args.empty())
    for (const qf::cli::subcommand& c : k_subcommands)
      if (std::strcmp(args[0], c.name) == 0) return c.run(args);
  // `quickfill daemon [options]`: the per-user daemon in the foreground.
  const bool daemon_mode = !args.empty() && std::strcmp(args[0], "daemon") == 0;
  if (daemon_mode) args = args.subspan(1);
  qf::server::server_args opts;
  std::string error;
  if (!qf::server::parse_server_args(args, opts, &error)) {
    std::fprintf(stderr, "quickfill: %s\n", error.c_str());
    return 2;
  }
  if (opts.help) {
    std::fputs(qf::server::server_usage(), stdout);
    return 0;
  }
  if (opts.version) {
    std::printf("quickfill %s\n", QUICKFILL_VERSION);
    return 0;
  }
  if (!qf::server::setup_logging(opts.log_level, opts.log_file, &error)) {
    std::fprintf(stderr, "quickfill: %s\n", error.c_str());
    return 2;
  }
  if (daemon_mode) return qf::server::daemon::run_daemon(opts, qf::cli::daemon_http_service());
  if (!opts.http_listen.empty() || !opts.http_api_key_file.empty()) {
    std::fprintf(stderr, "quickfill: --http and --api-key-file are options of `quickfill daemon` and `quickfill serve`\n");
    return 2;
  }
  opts.user_config = qf::server::default_user_config_path();  // of the editor's environment
  return qf::server::daemon::run_stdio_entry(opts);
}
