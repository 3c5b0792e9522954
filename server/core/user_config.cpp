// Reading the user config file with its ownership and mode checks (see user_config.h).
#include "server/core/user_config.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include <boost/json.hpp>

namespace qf::server {

namespace {

constexpr std::size_t max_config_bytes = 1 << 20;

std::string octal_mode(mode_t m) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "%04o", static_cast<unsigned>(m & 07777));
  return buf;
}

// Why a file with this status may not be used ("" when it may).
std::string check_status(const struct stat& st) {
  if (S_ISLNK(st.st_mode)) return "it is a symbolic link (use a regular file)";
  if (!S_ISREG(st.st_mode)) return "it is not a regular file";
  if (st.st_uid != geteuid())
    return "it is owned by uid " + std::to_string(st.st_uid) + ", not by you (uid " + std::to_string(geteuid()) + ")";
  if (st.st_mode & (S_IWGRP | S_IWOTH))
    return "it is writable by " + std::string(st.st_mode & S_IWGRP ? "its group" : "others") + " (mode " +
           octal_mode(st.st_mode) + "; chmod 600 it)";
  if (st.st_size > static_cast<off_t>(max_config_bytes)) return "it is larger than 1 MiB";
  return {};
}

}  // namespace

std::string default_user_config_path() {
  const char* xdg = std::getenv("XDG_CONFIG_HOME");
  if (xdg && *xdg) return std::string(xdg) + "/quickfill/config.json";
  const char* home = std::getenv("HOME");
  if (home && *home) return std::string(home) + "/.config/quickfill/config.json";
  return {};
}

user_config read_user_config(const std::string& path) {
  user_config out;
  if (path.empty()) return out;
  struct stat st{};
  if (lstat(path.c_str(), &st) != 0) {
    if (errno != ENOENT && errno != ENOTDIR) out.refused = std::string("it cannot be read: ") + std::strerror(errno);
    return out;
  }
  if (out.refused = check_status(st); !out.refused.empty()) return out;
  const int fd = open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) {
    out.refused = std::string("it cannot be opened: ") + std::strerror(errno);
    return out;
  }
  std::string text;
  if (fstat(fd, &st) != 0) {
    out.refused = std::string("it cannot be read: ") + std::strerror(errno);
  } else if (out.refused = check_status(st); out.refused.empty()) {
    char buf[65536];
    for (;;) {
      const ssize_t n = read(fd, buf, sizeof buf);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) {
        out.refused = std::string("it cannot be read: ") + std::strerror(errno);
        break;
      }
      if (n == 0) break;
      text.append(buf, static_cast<std::size_t>(n));
      if (text.size() > max_config_bytes) {
        out.refused = "it is larger than 1 MiB";
        break;
      }
    }
  }
  close(fd);
  if (!out.refused.empty()) return out;
  boost::system::error_code ec;
  boost::json::parse_options po;
  po.allow_comments = true;
  po.allow_trailing_commas = true;
  boost::json::value v = boost::json::parse(text, ec, {}, po);
  if (ec) {
    out.refused = "it is not valid JSON (" + ec.message() + ")";
    return out;
  }
  if (v.is_null()) v = boost::json::object{};  // `null`: no settings, but the file is there
  out.payload = std::move(v);
  return out;
}

}  // namespace qf::server
