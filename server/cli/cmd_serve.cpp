// `quickfill serve --http HOST:PORT`: the llama-server-compatible HTTP
// endpoint (server/http/) on this process's own engine, for clients built for
// llama-server (llama.vim, llama.vscode, Continue, quickfill's remote
// sources). One Asio io_context on the main thread is both the HTTP server's
// and the core's dispatcher; the model is loaded with the user config file's
// settings (the serving user's own, as for an editor session) under the
// command line's --model/--threads/--device. SIGINT/SIGTERM stop it.
#include <csignal>
#include <cstdio>
#include <string>

#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/signal_set.hpp>
#include <spdlog/spdlog.h>

#include "server/cli/cli_args.h"
#include "server/cli/commands.h"
#include "server/completion/provider_factory.h"
#include "server/http/http_server.h"
#include "server/logging.h"
#include "server/server_core.h"
#include "server/settings.h"
#include "server/user_config.h"

namespace qf::cli {

int cmd_serve(std::span<char*> args) {
  std::string listen = "127.0.0.1:8012", model, device, key_file, config = "default", log_level = "info", log_file;
  int threads = 0;
  int64_t max_body = 8 << 20, max_conns = 64, max_pending = 16, buffers = 8, deadline_ms = 2000;
  bool allow_remote = false;
  arg_parser p("quickfill serve",
               "Serves completions over HTTP the way llama.cpp's llama-server does: POST /infill\n"
               "(llama.vim, llama.vscode), POST /v1/completions (OpenAI, with suffix), GET\n"
               "/v1/models, /health, /props, and /quickfill/stats, /quickfill/report (the\n"
               "dashboard). Loopback only unless --allow-remote. See docs/remote.md.");
  p.add_string({"--http"}, &listen, "HOST:PORT to listen on (default 127.0.0.1:8012; port 0: any free port)");
  p.add_string({"-m", "--model"}, &model, "GGUF model file or pulled model name (default: the model setting)");
  p.add_int({"-t", "--threads"}, &threads, "threads (default: all cores)");
  p.add_string({"--device"}, &device, "auto | cpu | cuda (default: the device setting)");
  p.add_string({"--api-key-file"}, &key_file, "file of API keys, one a line: requests must send one");
  p.add_flag({"--allow-remote"}, &allow_remote, "allow a non-loopback --http address");
  p.add_int({"--max-body-bytes"}, &max_body, "largest request body (default 8 MiB)");
  p.add_int({"--max-connections"}, &max_conns, "connections open at once (default 64)");
  p.add_int({"--max-pending"}, &max_pending, "completions queued or running at once; more get 429 (default 16)");
  p.add_int({"--buffers"}, &buffers, "KV buffers kept for HTTP clients (default 8)");
  p.add_int({"--deadline-ms"}, &deadline_ms, "budget of a request without t_max_* limits (default 2000)");
  p.add_string({"--config"}, &config, "user config file to read settings from (default: yours; none: no file)");
  p.add_string({"--log-level"}, &log_level, "trace | debug | info | warn | error (default info)");
  p.add_string({"--log-file"}, &log_file, "write the log there instead of stderr");
  if (!p.parse(args)) return p.exit_code();
  std::string error;
  if (!server::setup_logging(log_level, log_file, &error)) {
    std::fprintf(stderr, "quickfill serve: %s\n", error.c_str());
    return 2;
  }
  http::http_options ho;
  if (!http::parse_listen_address(listen, ho, &error)) {
    std::fprintf(stderr, "quickfill serve: %s\n", error.c_str());
    return 2;
  }
  if (max_body < 1024 || max_conns < 1 || max_pending < 1 || buffers < 1 || deadline_ms < 1) {
    std::fprintf(stderr, "quickfill serve: --max-body-bytes >= 1024; --max-connections, --max-pending, --buffers "
                         "and --deadline-ms >= 1\n");
    return 2;
  }
  ho.allow_remote = allow_remote;
  ho.api_key_file = key_file;
  ho.max_body_bytes = static_cast<std::size_t>(max_body);
  ho.max_connections = static_cast<std::size_t>(max_conns);
  ho.max_pending = static_cast<std::size_t>(max_pending);
  ho.buffers = static_cast<std::size_t>(buffers);
  ho.deadline_ms = static_cast<int>(deadline_ms);

  boost::asio::io_context ioc(1);
  server::core_options co;
  co.cli_model_path = model;
  co.cli_device = device;
  co.n_threads = threads;
  co.factory = [](const server::provider_options& o, std::string* err) { return server::make_completion_provider(o, err); };
  co.user_config_path = config == "none" ? "" : config == "default" ? server::default_user_config_path() : config;
  server::server_core core(co, [&ioc](std::function<void()> f) { boost::asio::post(ioc, std::move(f)); });

  // The serving user's own settings (the user config file), as an editor session's base layer.
  const server::user_config user = server::read_user_config(*co.user_config_path);
  if (!user.refused.empty())
    spdlog::warn("the user config file {} is not used: {}", *co.user_config_path, user.refused);
  std::vector<std::string> refused;
  const server::parsed_settings parsed = server::parse_layered_settings(user.payload, nullptr, &refused);
  for (const auto& pr : parsed.problems) spdlog::warn("settings: {}", pr.message);
  if (parsed.usable) core.apply_settings(parsed.values);
  core.start();

  http::http_server server(core, ioc, ho);
  if (!server.start(&error)) {
    std::fprintf(stderr, "quickfill serve: %s\n", error.c_str());
    core.stop();
    return 1;
  }
  int exit_code = 0;
  core.load_model(nullptr, [&](const server::model_state& m) {
    if (m.loaded) {
      spdlog::info("model loaded: {}", m.description);
      return;
    }
    spdlog::error("no model: {}", m.error);
    std::fprintf(stderr, "quickfill serve: no model: %s\n", m.error.c_str());
    exit_code = 1;
    server.stop();
    ioc.stop();
  });
  std::fprintf(stderr, "quickfill serve: listening on http://%s:%d\n", ho.host.c_str(), server.port());
  std::fflush(stderr);

  boost::asio::signal_set signals(ioc, SIGINT, SIGTERM);
  signals.async_wait([&](const boost::system::error_code& ec, int) {
    if (ec) return;
    spdlog::info("stopping");
    server.stop();
    core.worker().cancel_all(cancel_reason::shutdown);
    ioc.stop();
  });
  ioc.run();
  server.stop();
  core.stop();
  return exit_code;
}

}  // namespace qf::cli
