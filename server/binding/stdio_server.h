// Runs the LSP server over stdin/stdout: a blocking reader thread frames
// messages and posts them to the event loop, which the calling thread runs,
// through the loop's bounded input queue (backpressure: the reader waits
// while the loop is behind); the inference worker is started by the server
// core. Returns the process exit code (0 after shutdown+exit, 1 when the
// session ended otherwise).
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "lsp/transport.h"
#include "server/binding/event_loop.h"
#include "server/core/server_core.h"

namespace qf::server {

class lsp_server;

struct stdio_options {
  core_options core;
  std::size_t max_message_bytes = lsp::default_max_message_bytes;
  // Bounds of the messages read but not yet handled (event_loop.h); the
  // reader waits when they are reached.
  input_limits input;
  int in_fd = 0;
  int out_fd = 1;
  // How long a write may wait for the client to take any byte (-1: forever).
  // Past it the client is dropped: the descriptor is shut down both ways, so
  // the session ends as if its input had ended (a daemon session's socket).
  int write_timeout_ms = -1;
  input_queue_stats* input_stats = nullptr;  // filled in when the session ends (tests)
  // Messages already read from in_fd (the bridge reads the first one to
  // choose between the daemon and this process), handled first, and the
  // reader they came from, which then reads on (it may hold buffered input).
  std::vector<std::string> first_messages;
  lsp::fd_reader* reader = nullptr;
};

struct server_args;
// The options the command line gives a session (model, device, threads,
// limits, background work; the engine's provider factory), in process or in
// the daemon alike.
stdio_options stdio_options_of(const server_args& a);

// `on_ready` (optional) sees the server before the first message is read.
int run_stdio_server(stdio_options opts, const std::function<void(lsp_server&)>& on_ready = {});

}  // namespace qf::server
