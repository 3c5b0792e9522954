// Private files: no links followed, regular files only, mode 0600 (see private_file.h).
#include "indexing/private_file.h"

#include <fcntl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <system_error>

#include "indexing/fd_read.h"

namespace qf::index {

namespace {

std::string errno_text(int e) { return std::strerror(e); }

// Checks an open descriptor: a regular file of ours with one link, then 0600.
bool check_private(int fd, const std::string& path, std::string* error) {
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    *error = "cannot inspect " + path + ": " + errno_text(errno);
    return false;
  }
  if (!S_ISREG(st.st_mode)) {
    *error = "refusing " + path + ": not a regular file";
    return false;
  }
  if (st.st_uid != ::geteuid()) {
    *error = "refusing " + path + ": owned by uid " + std::to_string(st.st_uid) + ", not by us (uid " +
             std::to_string(::geteuid()) + ")";
    return false;
  }
  if (st.st_nlink > 1) {
    *error = "refusing " + path + ": it has " + std::to_string(st.st_nlink) + " hard links (another file's content)";
    return false;
  }
  if ((st.st_mode & 07777) != 0600 && ::fchmod(fd, 0600) != 0) {
    *error = "cannot make " + path + " private (mode 0600): " + errno_text(errno);
    return false;
  }
  return true;
}

}  // namespace

int open_private_file(const std::string& path, int flags, std::string* error) {
  const int fd = ::open(path.c_str(), flags | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) {
    const int e = errno;
    struct stat st {};
    if (e != ELOOP && ::lstat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode) && !S_ISLNK(st.st_mode))
      *error = "refusing " + path + ": not a regular file";  // e.g. a FIFO nobody reads (ENXIO)
    else if (e == ELOOP)
      *error = "refusing " + path + ": it is a symbolic link (quickfill's own files are never followed through links)";
    else if (e == ENOENT && !(flags & O_CREAT))
      *error = "missing: " + path;
    else
      *error = "cannot open " + path + ": " + errno_text(e);
    return -1;
  }
  if (!check_private(fd, path, error)) {
    ::close(fd);
    return -1;
  }
  return fd;
}

private_read read_private_file(const std::string& path, std::uint64_t max_bytes, std::string* out,
                               std::string* error) {
  out->clear();
  // O_NONBLOCK: a FIFO planted at the path does not block the open (fstat then refuses it).
  const int fd = open_private_file(path, O_RDONLY | O_NONBLOCK, error);
  if (fd < 0) return error->rfind("missing: ", 0) == 0 ? private_read::missing : private_read::refused;
  struct stat st {};
  if (::fstat(fd, &st) != 0 || static_cast<std::uint64_t>(st.st_size) > max_bytes) {
    ::close(fd);
    *error = path + " is larger than " + std::to_string(max_bytes) + " bytes";
    return private_read::too_large;
  }
  if (!read_fd(fd, static_cast<std::size_t>(st.st_size), out)) {
    *error = "cannot read " + path + ": " + errno_text(errno);
    ::close(fd);
    return private_read::refused;
  }
  ::close(fd);
  return private_read::ok;
}

std::string random_hex(std::size_t n) {
  std::string raw(n, '\0');
  std::size_t got = 0;
  while (got < n) {
    const ssize_t r = ::getrandom(raw.data() + got, n - got, 0);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) break;
    got += static_cast<std::size_t>(r);
  }
  if (got < n) {  // no getrandom: the clock, the pid and a counter, still unique per process
    static std::atomic<std::uint64_t> counter{0};
    std::uint64_t x = static_cast<std::uint64_t>(::getpid()) * 0x9e3779b97f4a7c15ull ^
                      static_cast<std::uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count()) ^
                      counter.fetch_add(1) << 48;
    for (std::size_t i = got; i < n; ++i, x = x * 6364136223846793005ull + 1442695040888963407ull)
      raw[i] = static_cast<char>(x >> 56);
  }
  static const char digits[] = "0123456789abcdef";
  std::string hex;
  hex.reserve(2 * n);
  for (unsigned char c : raw) {
    hex.push_back(digits[c >> 4]);
    hex.push_back(digits[c & 15]);
  }
  return hex;
}

bool write_private_file(const std::string& path, std::string_view bytes, std::string* error) {
  const std::filesystem::path p(path);
  if (p.has_parent_path()) {
    std::error_code ec;
    if (!std::filesystem::is_directory(p.parent_path(), ec)) {
      std::filesystem::create_directories(p.parent_path(), ec);
      if (ec) {
        *error = "cannot create " + p.parent_path().string() + ": " + ec.message();
        return false;
      }
      ::chmod(p.parent_path().c_str(), 0700);
    }
  }
  const std::string tmp = path + ".tmp." + std::to_string(::getpid()) + "." + random_hex(6);
  const int fd = open_private_file(tmp, O_WRONLY | O_CREAT | O_EXCL, error);
  if (fd < 0) return false;
  std::size_t done = 0;
  bool ok = true;
  while (ok && done < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) ok = false;
    else done += static_cast<std::size_t>(n);
  }
  ok = ok && ::fsync(fd) == 0;
  const int write_errno = errno;
  ok = ::close(fd) == 0 && ok;
  if (!ok || std::rename(tmp.c_str(), path.c_str()) != 0) {
    *error = "cannot write " + path + ": " + errno_text(ok ? errno : write_errno);
    ::unlink(tmp.c_str());
    return false;
  }
  return true;
}

}  // namespace qf::index
