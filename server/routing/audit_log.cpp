// The audit log (see audit_log.h).
#include "server/routing/audit_log.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <ctime>
#include <span>

#include <boost/json.hpp>
#include <spdlog/spdlog.h>

#include "indexing/install_salt.h"
#include "indexing/private_file.h"
#include "text/utf8.h"
#include "server/net/sha256.h"

namespace qf::server::routing {

namespace json = boost::json;

std::string uri_hash(const std::string& uri) {
  // Salted per install: the hash of a known path cannot be computed from the log alone.
  const std::string& salt = index::default_install_salt();
  net::sha256 h;
  h.update(std::span<const char>(salt.data(), salt.size()));
  h.update(std::span<const char>("\n", 1));
  h.update(std::span<const char>(uri.data(), uri.size()));
  return h.hex_digest();
}

std::string utc_now_iso8601() {
  const auto now = std::chrono::system_clock::now();
  const std::time_t t = std::chrono::system_clock::to_time_t(now);
  const auto ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count() % 1000;
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[96];
  std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday,
                tm.tm_hour, tm.tm_min, tm.tm_sec, static_cast<int>(ms));
  return buf;
}

audit_log::audit_log(std::string path, bool include_code) : path_(std::move(path)), include_code_(include_code) {
  if (path_.empty() || path_[0] != '/') {  // the daemon works in /: a relative path would mean another file
    error_ = "the audit log path " + path_ + " is not absolute";
    return;
  }
  // A private file (indexing/private_file.h): a symbolic link, a FIFO, a
  // device, another user's file or a hard link at the path is refused.
  std::string why;
  fd_ = index::open_private_file(path_, O_WRONLY | O_CREAT | O_APPEND | O_NONBLOCK, &why);
  if (fd_ < 0) {
    error_ = "cannot open the audit log " + path_ + " (" + why + ")";
    return;
  }
  const int fl = ::fcntl(fd_, F_GETFL);
  if (fl >= 0) ::fcntl(fd_, F_SETFL, fl & ~O_NONBLOCK);
}

audit_log::~audit_log() {
  if (fd_ >= 0) ::close(fd_);
}

std::string audit_log::line(const audit_entry& e, bool include_code, const std::string& time_utc) {
  json::object o{{"time", time_utc},
                 {"source", e.source},
                 {"kind", e.kind},
                 {"document", uri_hash(e.uri)},
                 {"trigger", e.explicit_trigger ? "explicit" : "automatic"},
                 {"promptTokens", e.prompt_tokens},
                 {"completionTokens", e.completion_tokens},
                 {"status", e.status},
                 {"latencyMs", e.latency_ms}};
  if (include_code) {
    json::array s;
    for (const auto& t : e.suggestions) s.push_back(json::value(text::repair_utf8(t)));
    o["code"] = json::object{{"before", text::repair_utf8(e.code_before)},
                             {"after", text::repair_utf8(e.code_after)},
                             {"suggestions", std::move(s)}};
  }
  return json::serialize(o);
}

void audit_log::write(const audit_entry& e) {
  if (fd_ < 0) return;
  const std::string text = line(e, include_code_, utc_now_iso8601()) + "\n";
  std::lock_guard<std::mutex> lock(mu_);
  std::size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd_, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      if (!write_failed_) spdlog::error("audit log {}: write failed: {}", path_, std::strerror(errno));
      write_failed_ = true;
      return;
    }
    done += static_cast<std::size_t>(n);
  }
}

}  // namespace qf::server::routing
