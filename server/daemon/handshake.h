// The first line each way on a daemon connection, before any LSP frame.
//
// bridge -> daemon: {"quickfill":"hello","version":V,"pid":P, and the bridge's
//   server options: "model","device","threads","background",
//   "maxOpenDocuments","maxDocumentBytes","maxMessageSize"}
// daemon -> bridge: {"ok":true,"version":V,"pid":P} or
//   {"ok":false,"version":V,"pid":P,"error":"version"|"..."}
// A hello of another version makes the daemon drain (docs/daemon.md): it
// answers "version", stops listening, removes its socket so that the bridge
// can start a daemon of its own version, and exits when its last client has
// left. After the reply, the connection carries LSP frames both ways.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "server/core/server_args.h"

namespace qf::server::daemon {

// Caps on a hello (a client of our uid is still not trusted to be sane):
// over any of them the daemon answers {"ok":false,"error":...} naming it.
inline constexpr std::size_t max_hello_bytes = 16 * 1024;    // the line, '\n' included
inline constexpr std::size_t max_hello_members = 32;
inline constexpr std::size_t max_hello_string = 4096;        // model path, device, version
inline constexpr int max_hello_threads = 256;
inline constexpr std::size_t max_hello_message_bytes = std::size_t{1} << 30;      // maxMessageSize
inline constexpr std::size_t max_hello_open_documents = 1'000'000;               // maxOpenDocuments
inline constexpr std::size_t max_hello_document_bytes = std::size_t{16} << 30;   // maxDocumentBytes

// The version both sides compare: QUICKFILL_VERSION, or
// $QUICKFILL_DAEMON_VERSION when set (tests start daemons of another version).
std::string protocol_version();

struct hello {
  std::string version;
  long pid = 0;
  server_args args;  // model, device, threads, background, limits
};

struct hello_reply {
  bool ok = false;
  std::string version;
  long pid = 0;
  std::string error;
};

std::string encode_hello(const hello& h);                 // one line, '\n' included
std::optional<hello> decode_hello(const std::string& line, std::string* error);
std::string encode_reply(const hello_reply& r);
std::optional<hello_reply> decode_reply(const std::string& line, std::string* error);

}  // namespace qf::server::daemon
