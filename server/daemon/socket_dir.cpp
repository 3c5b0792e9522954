// The daemon's directory, lock and socket helpers (see socket_dir.h).
#include "server/daemon/socket_dir.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace qf::server::daemon {

std::string default_socket_dir(const std::string& flag) {
  if (!flag.empty()) return flag;
  if (const char* e = std::getenv("QUICKFILL_SOCKET_DIR"); e && *e) return e;
  if (const char* x = std::getenv("XDG_RUNTIME_DIR"); x && *x) return std::string(x) + "/quickfill";
  return "/tmp/quickfill-" + std::to_string(geteuid());
}

bool prepare_socket_dir(const std::string& dir, socket_paths& out, std::string* error) {
  if (dir.empty()) {
    *error = "the socket directory is empty";
    return false;
  }
  if (mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) {
    *error = "cannot create " + dir + ": " + std::strerror(errno);
    return false;
  }
  struct stat st {};
  if (lstat(dir.c_str(), &st) != 0) {
    *error = "cannot inspect " + dir + ": " + std::strerror(errno);
    return false;
  }
  if (S_ISLNK(st.st_mode) || !S_ISDIR(st.st_mode)) {
    *error = "refusing " + dir + ": not a directory (a symlink or another file)";
    return false;
  }
  if (st.st_uid != geteuid()) {
    *error = "refusing " + dir + ": owned by uid " + std::to_string(st.st_uid) + ", not by us (uid " +
             std::to_string(geteuid()) + ")";
    return false;
  }
  if ((st.st_mode & 077) != 0) {
    *error = "refusing " + dir + ": open to group or others (mode " + std::to_string((st.st_mode >> 6) & 7) +
             std::to_string((st.st_mode >> 3) & 7) + std::to_string(st.st_mode & 7) + ", 700 needed)";
    return false;
  }
  out.dir = dir;
  out.socket = dir + "/daemon.sock";
  out.lock = dir + "/daemon.lock";
  out.pid = dir + "/daemon.pid";
  out.log = dir + "/daemon.log";
  if (out.socket.size() >= sizeof(sockaddr_un{}.sun_path)) {
    *error = "socket path too long for a Unix socket: " + out.socket;
    return false;
  }
  return true;
}

bool dir_lock::acquire(const std::string& path, std::string* error) {
  fd_ = open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd_ < 0) {
    *error = "cannot open " + path + ": " + std::strerror(errno);
    return false;
  }
  while (flock(fd_, LOCK_EX) != 0) {
    if (errno == EINTR) continue;
    *error = "cannot lock " + path + ": " + std::strerror(errno);
    return false;
  }
  return true;
}

dir_lock::~dir_lock() {
  if (fd_ >= 0) close(fd_);  // releases the flock
}

int connect_unix(const std::string& path) {
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::strncpy(addr.sun_path, path.c_str(), sizeof(addr.sun_path) - 1);
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    const int e = errno;
    close(fd);
    errno = e;
    return -1;
  }
  return fd;
}

long peer_uid(int fd) {
  ucred cred{};
  socklen_t len = sizeof(cred);
  if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0) return -1;
  return static_cast<long>(cred.uid);
}

}  // namespace qf::server::daemon
