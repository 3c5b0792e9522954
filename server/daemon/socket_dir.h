// Where the per-user daemon listens, and the checks that keep it private.
//
// The directory is, in order: --socket-dir DIR, $QUICKFILL_SOCKET_DIR,
// $XDG_RUNTIME_DIR/quickfill, /tmp/quickfill-UID. It is created with mode 0700
// when absent (its parent must exist) and refused unless it is a real
// directory (not a symlink), owned by the effective uid and closed to group
// and others. In it: daemon.sock (mode 0600), daemon.lock (flock'ed by a
// bridge while it starts a daemon, so that racing editors start one),
// daemon.pid and daemon.log.
#pragma once

#include <string>

namespace qf::server::daemon {

struct socket_paths {
  std::string dir, socket, lock, pid, log;
};

// The directory to use (nothing is created).
std::string default_socket_dir(const std::string& flag);

// Creates `dir` if needed and checks it; false with *error when it cannot be
// used.
bool prepare_socket_dir(const std::string& dir, socket_paths& out, std::string* error);

// Holds an exclusive flock on the lock file while alive.
class dir_lock {
 public:
  // Blocks until the lock is held; false with *error on failure.
  bool acquire(const std::string& path, std::string* error);
  ~dir_lock();

 private:
  int fd_ = -1;
};

// Connects a Unix stream socket to `path`; the fd, or -1 with errno set.
int connect_unix(const std::string& path);

// The uid of the peer of a connected Unix socket (SO_PEERCRED); -1 on error.
long peer_uid(int fd);

}  // namespace qf::server::daemon
