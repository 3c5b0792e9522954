// `quickfill serve --http HOST:PORT`: the llama-server-compatible HTTP
// endpoint (server/http/) on this process's own engine, for clients built for
// llama-server (llama.vim, llama.vscode, Continue, quickfill's remote
// sources). One Asio io_context on the main thread is both the HTTP server's
// and the core's dispatcher; the model is loaded with the user config file's
// settings (the serving user's own, as for an editor session) under the
// command line's --model/--threads/--device (serve.h, shared with the
// daemon's --http). SIGINT/SIGTERM stop it.
#include <csignal>
#include <cstdio>
#include <string>

#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/signal_set.hpp>
#include <spdlog/spdlog.h>

#include "server/cli/cli_args.h"
#include "server/cli/commands.h"
#include "server/cli/serve.h"
#include "server/completion/pipeline/provider_factory.h"
#include "server/http/http_server.h"
#include "server/core/logging.h"
#include "server/core/user_config.h"

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
  serve_options so;
  so.http = ho;
  so.model = model;
  so.device = device;
  so.threads = threads;
  so.sessions = static_cast<int>(buffers);
  so.user_config = config == "none" ? "" : config == "default" ? server::default_user_config_path() : config;
  int exit_code = 0;
  std::function<void()> stop;
  so.on_loaded = [&](const server::model_state& m) {
    if (m.loaded) return;
    std::fprintf(stderr, "quickfill serve: no model: %s\n", m.error.c_str());
    exit_code = 1;
    ioc.stop();
  };
  stop = start_http_service(
      ioc, [](const server::provider_options& o, std::string* err) { return server::make_completion_provider(o, err); },
      so, &error);
  if (!stop) {
    std::fprintf(stderr, "quickfill serve: %s\n", error.c_str());
    return 1;
  }
  std::fprintf(stderr, "quickfill serve: listening on %s\n", listen.c_str());
  std::fflush(stderr);

  boost::asio::signal_set signals(ioc, SIGINT, SIGTERM);
  signals.async_wait([&](const boost::system::error_code& ec, int) {
    if (ec) return;
    spdlog::info("stopping");
    ioc.stop();
  });
  ioc.run();
  stop();
  return exit_code;
}

}  // namespace qf::cli
