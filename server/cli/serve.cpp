// The HTTP endpoint as a service (see serve.h).
#include "server/cli/serve.h"

#include <memory>

#include <boost/asio/post.hpp>
#include <spdlog/spdlog.h>

#include "server/core/settings.h"
#include "server/core/user_config.h"

namespace qf::cli {

namespace {

struct service {
  std::unique_ptr<server::server_core> core;
  std::unique_ptr<http::http_server> http;
};

}  // namespace

std::function<void()> start_http_service(boost::asio::io_context& io, server::provider_factory factory,
                                         const serve_options& opts, std::string* error) {
  auto svc = std::make_shared<service>();
  server::core_options co;
  co.cli_model_path = opts.model;
  co.cli_device = opts.device;
  co.n_threads = opts.threads;
  co.factory = std::move(factory);
  co.user_config_path = opts.user_config;
  svc->core = std::make_unique<server::server_core>(
      co, [&io](std::function<void()> f) { boost::asio::post(io, std::move(f)); });
  // The serving user's own settings (the user config file), as an editor session's base layer.
  const server::user_config user = server::read_user_config(opts.user_config);
  if (!user.refused.empty()) spdlog::warn("the user config file {} is not used: {}", opts.user_config, user.refused);
  std::vector<std::string> refused;
  const server::parsed_settings parsed = server::parse_layered_settings(user.payload, nullptr, &refused);
  for (const auto& p : parsed.problems) spdlog::warn("settings: {}", p.message);
  if (parsed.usable) svc->core->apply_settings(parsed.values);
  svc->core->start();
  svc->http = std::make_unique<http::http_server>(*svc->core, io, opts.http);
  if (!svc->http->start(error)) {
    svc->core->stop();
    return nullptr;
  }
  spdlog::info("http: listening on {}:{}", opts.http.host, svc->http->port());
  auto on_loaded = opts.on_loaded;
  const int sessions = opts.sessions;
  std::weak_ptr<service> weak = svc;
  svc->core->load_model(nullptr, [on_loaded, sessions, weak](const server::model_state& m) {
    const auto alive = weak.lock();
    if (!alive || !alive->core) return;  // stopped before the load ended
    if (m.loaded)
      spdlog::info("http: model loaded: {}", m.description);
    else
      spdlog::error("http: no model: {}", m.error);
    if (m.loaded && sessions > 0)
      alive->core->worker().post_task([sessions](server::scheduler::provider_slot& p) {
        if (p) p->sessions_changed(sessions);
      });
    if (on_loaded) on_loaded(m);
  });
  return [svc] {
    if (!svc->core) return;
    svc->http->stop();
    svc->core->worker().cancel_all(cancel_reason::shutdown);
    svc->core->stop();
    svc->http.reset();
    svc->core.reset();
  };
}

server::daemon::http_service daemon_http_service() {
  return [](boost::asio::io_context& io, server::provider_factory factory, const server::server_args& args,
            std::string* error) -> std::function<void()> {
    serve_options o;
    if (!http::parse_listen_address(args.http_listen, o.http, error)) return nullptr;
    o.http.api_key_file = args.http_api_key_file;
    o.model = args.model_path;
    o.device = args.device;
    o.threads = args.threads;
    o.user_config = server::default_user_config_path();
    return start_http_service(io, std::move(factory), o, error);
  };
}

}  // namespace qf::cli
