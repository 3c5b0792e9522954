// Downloading a model into the models folder (`quickfill model pull`).
//
// The bytes go to NAME.gguf.part in the models folder, with NAME.gguf.part.meta
// beside it (the URL, the server's ETag and Last-Modified, the expected
// SHA-256 and size); both are private files (indexing/private_file.h: created
// 0600, a symbolic link or FIFO at the path refused). A later pull of the same
// URL resumes: it hashes the bytes already there, asks for the rest with
// `Range: bytes=N-` and `If-Range` (the stored ETag, or Last-Modified), and
// appends a 206 answer; a 200 answer (the file changed, or the server ignores
// ranges) or a changed hash from the server starts over from byte 0. A resume
// keeps the expected hash the download began with: when this run learns none,
// the whole file is checked against the recorded one, and a --sha256 other
// than the recorded one is refused (--force starts over); a 416 naming the part's own size as the file's
// means the part is complete (it is verified and installed), any other 416
// starts over. The SHA-256 is computed while writing and
// checked against, in this order: --sha256, an X-Linked-Etag header (Hugging
// Face sends it, quoted, on the redirect to its CDN for files stored in LFS),
// or an ETag that is 64 hex digits. A mismatch deletes the download. A model
// already installed is not fetched again, but --sha256 is checked against it. The
// complete file must open as a GGUF (header, metadata and tensor table checked
// against the file size) before it is fsynced and renamed to NAME.gguf, so the
// folder never holds a half-written or foreign NAME.gguf.
//
// An interrupted transfer (the connection dropped, a timeout) and a full disk
// (ENOSPC, EDQUOT, EFBIG) keep the .part file: every byte in it was received
// and written, so the next run resumes from its end. A part that cannot be
// used (wrong hash, not a GGUF) is deleted. One pull per name at a time (an
// exclusive lock on the .part file).
#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>

#include "server/net/http_client.h"

namespace qf::cli {

class pull_error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct pull_request {
  std::string url;
  std::string name;        // installed as <models_dir>/<name>.gguf
  std::string models_dir;
  std::string sha256;      // expected digest (hex), "" when not given
  bool force = false;      // replace an installed file of that name
  std::string hint_404;    // added to the message of a 404 (what to check)
  std::string hint_auth;   // added to the message of a 401/403
  net::request_options http;
};

// What the puller reports while it works (progress bar or log lines).
class pull_observer {
 public:
  virtual ~pull_observer() = default;
  virtual void note(const std::string& line) = 0;
  // The transfer begins at byte `offset` of `total` (when known).
  virtual void start(uint64_t offset, std::optional<uint64_t> total) = 0;
  virtual void advance(uint64_t bytes_done) = 0;  // bytes of the file now on disk
  virtual void finish() = 0;                      // the transfer ended (or failed)
};

struct pull_report {
  std::string path;            // the installed file
  bool already_present = false;  // nothing was fetched
  uint64_t size = 0;
  uint64_t resumed_from = 0;   // bytes of an earlier partial download that were kept
  uint64_t fetched = 0;        // body bytes received by this run
  std::string sha256;          // of the installed file
  std::string checked_against; // "--sha256", "X-Linked-Etag", "ETag", "" (no hash known)
  std::string architecture;    // general.architecture
};

// Throws pull_error with a message for the user.
pull_report pull_model(const pull_request& req, pull_observer& obs);

// "1.5 GiB", "312.4 MiB", "900 B".
std::string format_bytes(uint64_t n);

}  // namespace qf::cli
