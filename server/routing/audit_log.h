// The audit log of calls to non-local sources (settings audit.path,
// audit.includeCode): JSON Lines, one line per call, in a file created with
// mode 0600 (an existing file is set to 0600 too). The path must be absolute
// and is opened as a private file (indexing/private_file.h): a symbolic link,
// a FIFO or device, another user's file or a file with several hard links
// there is refused with a message, never followed or appended to. A line
// holds the time (UTC, ISO 8601), the source, the SHA-256 of the install salt
// and the document URI (indexing/install_salt.h; never the URI itself), the
// token counts, the status ("ok" or the failure kind) and the
// latency; code text (the lines around the cursor and the suggestions) only
// with includeCode. Writes are serialized; a write error is logged once and
// the server goes on.
#pragma once

#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

namespace qf::server::routing {

struct audit_entry {
  std::string source;
  std::string kind;
  std::string uri;  // hashed, never written
  bool explicit_trigger = false;
  std::int64_t prompt_tokens = 0;
  std::int64_t completion_tokens = 0;
  std::string status;  // "ok", "cancelled" or a failure kind
  double latency_ms = 0;
  // Written only with include_code.
  std::string code_before;  // up to 2 KiB before the cursor
  std::string code_after;   // up to 512 bytes after it
  std::vector<std::string> suggestions;
};

class audit_log {
 public:
  // Opens (creates) `path` for appending; ok() is false with error() set when it cannot.
  audit_log(std::string path, bool include_code);
  ~audit_log();
  audit_log(const audit_log&) = delete;
  audit_log& operator=(const audit_log&) = delete;

  bool ok() const { return fd_ >= 0; }
  const std::string& error() const { return error_; }
  const std::string& path() const { return path_; }
  void write(const audit_entry& e);

  // One line of the log (without the newline), for tests too.
  static std::string line(const audit_entry& e, bool include_code, const std::string& time_utc);

 private:
  std::string path_;
  bool include_code_;
  int fd_ = -1;
  std::string error_;
  std::mutex mu_;
  bool write_failed_ = false;
};

std::string uri_hash(const std::string& uri);  // 64 hex digits: SHA-256 of the install salt, "\n", the URI
std::string utc_now_iso8601();                  // "2026-12-02T17:30:00.123Z"

}  // namespace qf::server::routing
