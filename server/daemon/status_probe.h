// The daemon's status without a session: a client (`quickfill doctor`)
// connects, sends the one line {"quickfill":"status"} instead of a hello,
// and reads one line back, {"ok":true,"version":V,"pid":P,"sessions":N,
// "engines":E,"socket":S}; the daemon then closes the connection. Nothing is
// loaded and no session starts. The connection is checked like any other
// (same uid, SO_PEERCRED, on both sides).
#pragma once

#include <optional>
#include <string>

#include <boost/json/value.hpp>

namespace qf::server::daemon {

// True when `line` (the first line of a connection) asks for the status.
bool is_status_probe(const std::string& line);

struct daemon_status {
  std::string version;
  long pid = 0;
  long sessions = 0;
  long engines = 0;
  std::string socket;
};
std::string encode_status(const daemon_status& s);  // one line, '\n' included

// Asks the daemon listening at `socket_path`; nullopt with *error when no
// daemon answers within timeout_ms (none listening, another uid, a stale
// socket, an answer that is not a status).
std::optional<daemon_status> probe_daemon(const std::string& socket_path, int timeout_ms, std::string* error);

}  // namespace qf::server::daemon
