// The per-install salt (see install_salt.h).
#include "indexing/install_salt.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <system_error>

#include <spdlog/spdlog.h>

#include "indexing/definition_cache.h"
#include "indexing/private_file.h"

namespace qf::index {

namespace {

constexpr std::size_t salt_bytes = 32;

bool valid_salt(const std::string& s) {
  if (s.size() != 2 * salt_bytes) return false;
  for (char c : s)
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  return true;
}

// Reads the stored salt: true with *salt, or false with *error (missing: *error starts "missing: ").
bool read_salt(const std::string& path, std::string* salt, std::string* error) {
  std::string text;
  const private_read r = read_private_file(path, 4096, &text, error);
  if (r != private_read::ok) return false;
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.pop_back();
  if (!valid_salt(text)) {
    *error = "refusing " + path + ": not 64 hex digits (delete it to make a new salt)";
    return false;
  }
  *salt = text;
  return true;
}

}  // namespace

std::string install_salt(const std::string& dir, std::string* error) {
  if (dir.empty()) {
    *error = "no cache folder (set XDG_CACHE_HOME or HOME)";
    return {};
  }
  const std::string path = dir + "/salt";
  std::string salt;
  for (int attempt = 0; attempt < 3; ++attempt) {
    if (read_salt(path, &salt, error)) return salt;
    if (error->rfind("missing: ", 0) != 0) {
      // Another process may be between its link and its unlink (two links
      // for a moment): look again before giving up.
      ::usleep(20000);
      continue;
    }
    // Absent: write a complete one aside, then link it into place (that
    // fails when another process got there first: then theirs is read).
    const std::string mine = path + ".new." + std::to_string(::getpid()) + "." + random_hex(4);
    if (!write_private_file(mine, random_hex(salt_bytes) + "\n", error)) return {};
    const int linked = ::link(mine.c_str(), path.c_str());
    const int link_errno = errno;
    ::unlink(mine.c_str());
    if (linked != 0 && link_errno != EEXIST) {
      *error = "cannot create " + path + ": " + std::strerror(link_errno);
      return {};
    }
  }
  return read_salt(path, &salt, error) ? salt : std::string();
}

const std::string& default_install_salt() {
  static const std::string salt = [] {
    std::string error;
    std::string s = install_salt(default_cache_dir(), &error);
    if (s.empty()) {
      spdlog::warn("install salt: {}; using a salt for this process only", error);
      s = random_hex(salt_bytes);
    }
    return s;
  }();
  return salt;
}

}  // namespace qf::index
