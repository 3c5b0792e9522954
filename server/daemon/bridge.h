// `quickfill --stdio`, what editors run: in front of the per-user daemon by
// default, or the whole server in this process.
//
// The bridge reads the editor's first message (initialize) to learn whether
// the daemon is wanted: --no-daemon, QUICKFILL_NO_DAEMON=1 (not "0") or
// initializationOptions' daemon.enabled = false keep today's in-process
// server, which then handles that message and the rest. Otherwise it connects
// to <socket dir>/daemon.sock, starting the daemon when nothing answers: under
// an flock on daemon.lock, so that of several editors starting at once one
// starts it and the others wait for its socket. A daemon of another version
// drains on our hello (handshake.h) and we start one of ours. If no daemon
// can be reached, the server runs in this process after all (logged).
//
// Then it relays LSP frames between stdio and the socket (Boost.Asio: the
// socket's reads and writes, stdout and all session state on the one thread
// that runs the io_context; a reader thread frames stdin and posts each
// message to it), recording the session (bridge_state.h; docs/daemon.md,
// "Threads and ownership"). If the daemon goes away before the editor said exit, the
// requests in flight get one error each, a daemon is started again and the
// session is replayed to it: initialize, initialized, settings, workspace
// folders, open documents with their current text. Five restarts within a
// minute end the bridge (code 1) instead.
#pragma once

#include "server/core/server_args.h"

namespace qf::server::daemon {

// The process exit code (as run_stdio_server: 0 after shutdown + exit).
int run_stdio_entry(const server_args& args);

// QUICKFILL_NO_DAEMON is set to something other than "" or "0".
bool no_daemon_from_environment();

}  // namespace qf::server::daemon
