// The per-user daemon (`quickfill daemon`, started by `quickfill --stdio`
// when none runs): one process that serves every editor window of a user
// over a Unix socket, with one engine per model (engine_pool.h) and one LSP
// session per connection.
//
// Lifecycle (docs/daemon.md):
// * Binds <dir>/daemon.sock (0600, in a 0700 directory, socket_dir.h) after
//   checking that no live daemon answers there; writes daemon.pid.
// * Each connection: the peer's uid must be ours (SO_PEERCRED), else it is
//   refused with one line and closed; then the hello (handshake.h). Another
//   version makes this daemon drain (stop listening, remove the socket, exit
//   when the last client leaves). Otherwise the connection becomes a session:
//   the same LSP server as `quickfill --stdio` (stdio_server.h) on the
//   socket, with a provider from the shared pool, on its own thread.
// * With no client for the idle timeout it exits; SIGTERM/SIGINT end every
//   session (their sockets are shut down) and then the process.
// The accept loop, handshakes, timers and signals run on one Boost.Asio
// io_context (a strand of one thread); sessions read and write their socket
// with the server's framing (lsp/transport.h), as on stdio.
//
// Threads and ownership (the whole picture, with each handoff of a keystroke
// and of a completion, bridge included: docs/daemon.md, "Threads and
// ownership"): the main thread owns the listener and the session table; each
// session is a session thread (its event loop: lsp_server, server_core, the
// socket's writes), a socket reader, and its scheduler's worker, which runs
// the session's own completion pipeline on its own thread; only the
// pipeline's evals meet the other sessions', in the shared engine's steps
// (engine_pool.h, step_loop.h). The engine has no thread: the caller whose
// eval finds no step running leads the next one. Cancellation stays within
// the session: its scheduler cancels the token its evals hold.
// With `--http HOST:PORT` the daemon also runs the HTTP endpoint (server/http/)
// on its io_context, its provider a session of the shared engine pool, and
// does not exit when idle (an endpoint that cannot start is logged; the
// daemon serves its editors without it). qf_daemon cannot link the endpoint (it sits above
// it), so the binary injects the service that makes it (server/cli/serve.h).
#pragma once

#include <functional>
#include <string>

#include <boost/asio/io_context.hpp>

#include "server/core/server_args.h"
#include "server/core/server_core.h"
#include "server/daemon/engine_pool.h"

namespace qf::server::daemon {

// Starts a service on `io` whose completions come from `factory`; returns the
// function that stops it (null with *error when it could not start).
using http_service = std::function<std::function<void()>(boost::asio::io_context& io, provider_factory factory,
                                                         const server_args& args, std::string* error)>;

// Runs until idle or signalled; the process exit code. `args.socket_dir`
// (flag or default), `args.idle_timeout_s` (-1: the setting's default);
// `http` starts the endpoint of `args.http_listen`; `engines` loads the
// shared engines and makes the sessions' providers on them (unset:
// model_loaders(), the model; the daemon tests' own daemon injects the
// scripted model).
int run_daemon(const server_args& args, http_service http = {}, engine_loaders engines = {});

}  // namespace qf::server::daemon
