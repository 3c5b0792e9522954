// The llama-server-compatible HTTP endpoint (`quickfill serve --http`):
// /infill, /v1/completions, /v1/models, /health, /props, and quickfill's own
// /quickfill/stats and /quickfill/report, served by a server_core -- the same
// engine, prefix cache, scheduler, deadlines and cancellation as the LSP
// sessions (docs/remote.md, docs/editors.md).
//
// Design:
// * Boost.Beast on the caller's io_context, which must run on one thread:
//   that thread is also the core's dispatcher (its `post` must lead there),
//   so connection state needs no locks.
// * A completion request becomes a scheduler job (fim_mapping.h) keyed by a
//   per-request id; while it waits, the connection is read: end of stream or
//   an error (the client went away, e.g. llama.vim killing its curl on the
//   next keystroke) cancels the job. A newer request on the same buffer
//   preempts an older one (latest wins), as in the editor path.
// * Limits: the bind address must be loopback unless allow_remote; a request
//   body over max_body_bytes is refused with 413, more than max_connections
//   connections are closed at once, and more than max_pending completions
//   queued or running get 429. With an API key file every path but /health
//   needs a key (401 otherwise). On a loopback address a Host header naming
//   another machine (DNS rebinding from a web page) gets 403. Bad JSON, wrong types and unknown fields get
//   400 naming the field. Every answer is JSON (the dashboard HTML aside), and
//   the server keeps serving after each.
// * Every completion request is one stats record with source kind "http".
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include <boost/asio/io_context.hpp>

#include "server/http/api_keys.h"

namespace qf::server {
class server_core;
}

namespace qf::http {

struct http_options {
  std::string host = "127.0.0.1";
  int port = 8012;                   // 0: any free port (port() tells which)
  bool allow_remote = false;         // bind a non-loopback address
  std::string api_key_file;          // "": no key needed
  std::size_t max_body_bytes = 8u << 20;
  std::size_t max_connections = 64;
  std::size_t max_pending = 16;      // completions queued or running at once
  std::size_t buffers = 8;           // KV buffers for HTTP clients (fim_mapping.h)
  int deadline_ms = 2000;            // a request without t_max_* limits
};

// Parses "HOST:PORT" (or ":PORT", "PORT"); false with *error.
bool parse_listen_address(const std::string& text, http_options& out, std::string* error);

class http_server {
 public:
  http_server(server::server_core& core, boost::asio::io_context& ioc, http_options opts);
  ~http_server();
  http_server(const http_server&) = delete;
  http_server& operator=(const http_server&) = delete;

  // Reads the key file, binds and starts accepting; false with *error.
  bool start(std::string* error);
  // Stops accepting and closes every connection (their jobs are cancelled).
  void stop();
  int port() const;

  struct state;  // http_server.cpp

 private:
  std::shared_ptr<state> st_;
};

}  // namespace qf::http
