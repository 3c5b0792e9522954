// Command-line options of the LSP server mode (`quickfill [--stdio] ...`),
// shared by the shipped binary and the test server so both parse alike.
#pragma once

#include <cstddef>
#include <span>
#include <string>

namespace qf::server {

struct server_args {
  std::string model_path;
  std::string device;  // auto | cpu | cuda; "" = the "device" setting decides
  std::string log_file;
  std::string log_level = "info";
  int threads = 0;
  std::size_t max_message_bytes = 64u << 20;
  std::size_t max_open_documents = 1000;              // index::store_limits
  std::size_t max_document_bytes = std::size_t{256} << 20;  // all open documents together
  bool background = true;
  // The per-user daemon (docs/daemon.md).
  bool no_daemon = false;       // --no-daemon (or QUICKFILL_NO_DAEMON=1): the model lives in this process
  std::string socket_dir;       // --socket-dir ("" = $QUICKFILL_SOCKET_DIR, $XDG_RUNTIME_DIR/quickfill, /tmp/quickfill-UID)
  int client_timeout_s = 60;    // daemon --client-timeout: a client that reads nothing this long is dropped
  int max_sessions = 64;        // daemon --max-sessions: clients served at once (more are refused)
  int idle_timeout_s = -1;      // --idle-timeout (-1 = the daemon.idleTimeoutSeconds setting)
  // daemon --http HOST:PORT: also serve llama-server clients over HTTP from the
  // shared engines (server/http/, docs/remote.md); --api-key-file for it.
  std::string http_listen;
  std::string http_api_key_file;
  // The user config file of the editor's environment (user_config.h; set by
  // main, not an option): the daemon gets it in the hello, so a session reads
  // the file of the editor that opened it, not of the one that started the daemon.
  std::string user_config;
  bool help = false;
  bool version = false;
};

// Parses args (without the program name). Returns false with *error set.
bool parse_server_args(std::span<char*> args, server_args& out, std::string* error);

const char* server_usage();

}  // namespace qf::server
