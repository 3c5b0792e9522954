// The HTTP endpoint (server/http/) as a service on a caller's io_context:
// a server_core with the given provider factory, the settings of a user
// config file under the command line's model/device/threads, an http_server,
// and the model load. `quickfill serve` (cmd_serve.cpp) runs it with its own
// engine; the daemon's --http (server/daemon/daemon_server.h) with a session
// of its shared engine pool.
#pragma once

#include <functional>
#include <string>

#include <boost/asio/io_context.hpp>

#include "server/daemon/daemon_server.h"
#include "server/http/http_server.h"
#include "server/core/server_core.h"

namespace qf::cli {

struct serve_options {
  http::http_options http;
  std::string model, device;
  int threads = 0;
  std::string user_config;  // the settings file ("" reads none)
  // Told to the provider once loaded (completion_provider::sessions_changed):
  // the HTTP clients' buffers count as that many sessions for the KV cache
  // bounds (cacheSlots each, within cacheMiB). 0: left alone (the daemon's
  // pool counts its sessions itself).
  int sessions = 0;
  // Runs on the io_context once the load ended (loaded or not).
  std::function<void(const server::model_state&)> on_loaded;
};

// Starts listening and loading; the function that stops it all (closes the
// connections, cancels the jobs, stops the worker), or null with *error.
std::function<void()> start_http_service(boost::asio::io_context& io, server::provider_factory factory,
                                         const serve_options& opts, std::string* error);

// The daemon's service for `quickfill daemon --http HOST:PORT [--api-key-file F]`.
server::daemon::http_service daemon_http_service();

}  // namespace qf::cli
