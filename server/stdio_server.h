// Runs the LSP server over stdin/stdout: a blocking reader thread frames
// messages and posts them to the event loop, which the calling thread runs;
// the inference worker is started by the server core. Returns the process exit
// code (0 after shutdown+exit, 1 when the session ended otherwise).
#pragma once

#include <cstddef>
#include <functional>

#include "lsp/transport.h"
#include "server/server_core.h"

namespace qf::server {

class lsp_server;

struct stdio_options {
  core_options core;
  std::size_t max_message_bytes = lsp::default_max_message_bytes;
  int in_fd = 0;
  int out_fd = 1;
};

// `on_ready` (optional) sees the server before the first message is read.
int run_stdio_server(stdio_options opts, const std::function<void(lsp_server&)>& on_ready = {});

}  // namespace qf::server
