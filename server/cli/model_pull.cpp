// The model download: resume, hash, validate, install (see model_pull.h).
#include "server/cli/model_pull.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <sstream>
#include <vector>

#include "indexing/private_file.h"
#include "inference/gguf/gguf.h"
#include "server/net/sha256.h"

namespace qf::cli {

namespace fs = std::filesystem;

namespace {

// What NAME.gguf.part.meta remembers about the transfer that wrote the part.
struct part_meta {
  std::string url, etag, last_modified, sha256;
  std::optional<uint64_t> size;
};

// The record of a partial download; an absent or unreadable one is empty (the
// part is then not trusted: it starts over). A link or a FIFO there is refused.
part_meta read_meta(const std::string& path) {
  part_meta m;
  std::string text, why;
  const index::private_read r = index::read_private_file(path, 64 * 1024, &text, &why);
  if (r == index::private_read::missing) return m;
  if (r != index::private_read::ok) throw pull_error(why);
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    const size_t sp = line.find(' ');
    if (sp == std::string::npos) continue;
    const std::string key = line.substr(0, sp), val = line.substr(sp + 1);
    if (key == "url") m.url = val;
    if (key == "etag") m.etag = val;
    if (key == "last-modified") m.last_modified = val;
    if (key == "sha256") m.sha256 = val;
    if (key == "size") m.size = std::strtoull(val.c_str(), nullptr, 10);
  }
  return m;
}

// A unique 0600 temporary file renamed over the record (indexing/private_file.h).
void write_meta(const std::string& path, const part_meta& m) {
  std::ostringstream out;
  out << "url " << m.url << "\n";
  if (!m.etag.empty()) out << "etag " << m.etag << "\n";
  if (!m.last_modified.empty()) out << "last-modified " << m.last_modified << "\n";
  if (!m.sha256.empty()) out << "sha256 " << m.sha256 << "\n";
  if (m.size) out << "size " << *m.size << "\n";
  std::string error;
  if (!index::write_private_file(path, out.str(), &error)) throw pull_error(error);
}

// A header value without W/ and quotes, lower-cased when it is a SHA-256.
std::string unquote_etag(std::string v) {
  if (v.rfind("W/", 0) == 0) v.erase(0, 2);
  if (v.size() >= 2 && v.front() == '"' && v.back() == '"') v = v.substr(1, v.size() - 2);
  return v;
}

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

bool disk_full(int e) { return e == ENOSPC || e == EDQUOT || e == EFBIG; }

struct fd_guard {
  int fd = -1;
  ~fd_guard() {
    if (fd >= 0) ::close(fd);
  }
};

void remove_quietly(const std::string& p) {
  std::error_code ec;
  fs::remove(p, ec);
}

// Writes the body into the .part file, hashing as it goes; decides from the
// response head whether it continues the part, replaces it, or starts over.
class part_sink final : public net::body_sink {
 public:
  part_sink(const pull_request& req, int fd, uint64_t offset, net::sha256& hash, const part_meta& old,
            const std::string& meta_path, pull_observer& obs)
      : req_(req), fd_(fd), offset_(offset), hash_(hash), old_(old), meta_path_(meta_path), obs_(obs) {}

  bool on_response(const net::response& r) override {
    status_ = r.status;
    reason_ = r.reason;
    final_url_ = r.url;
    if (r.status == 416 && offset_ > 0) {
      // "bytes */N" with N the part's size: the part is the whole file (an
      // earlier run stopped between the last byte and the rename).
      const std::string* cr = net::find_header(r.headers, "Content-Range");
      unsigned long long t = 0;
      if (cr && std::sscanf(cr->c_str(), "bytes */%llu", &t) == 1 && t == offset_) {
        complete_ = true;
        total_ = t;
        pick_expected(r);
        if (expected_.empty() && !old_.sha256.empty())
          expected_ = old_.sha256, source_ = "the hash recorded when the download began";
        return false;
      }
      restart_ = "the server refused the range of the partial download";
      return false;
    }
    if (r.status != 200 && r.status != 206) return false;
    if (r.status == 200) {
      if (offset_ > 0) {
        obs_.note("the server sent the whole file (it changed, or ranges are not supported): starting over");
        truncate_all();
      }
      total_ = r.content_length;
    } else {
      const std::string* cr = net::find_header(r.headers, "Content-Range");
      unsigned long long a = 0, b = 0, t = 0;
      if (!cr || std::sscanf(cr->c_str(), "bytes %llu-%llu/%llu", &a, &b, &t) != 3 || a != offset_ || b + 1 != t)
        throw pull_error("the server answered the range request for bytes " + std::to_string(offset_) +
                         "- with Content-Range '" + (cr ? *cr : std::string()) + "'");
      total_ = t;
    }
    pick_expected(r);
    if (offset_ > 0 && !old_.sha256.empty() && !expected_.empty() && old_.sha256 != expected_) {
      restart_ = "the file changed on the server since the partial download";
      return false;
    }
    if (offset_ > 0 && expected_.empty() && !old_.sha256.empty()) {
      // The bytes kept were fetched expecting this hash: the whole file is
      // checked against it, whatever this answer says (or does not say).
      expected_ = old_.sha256;
      source_ = "the hash recorded when the download began";
    }
    part_meta m;
    m.url = req_.url;
    if (const std::string* e = net::find_header(r.headers, "ETag")) m.etag = *e;
    if (const std::string* lm = net::find_header(r.headers, "Last-Modified")) m.last_modified = *lm;
    m.sha256 = expected_;
    m.size = total_;
    write_meta(meta_path_, m);
    obs_.start(offset_, total_);
    return true;
  }

  // The expected digest: given, else on a redirect or the answer itself.
  void pick_expected(const net::response& r) {
    if (!req_.sha256.empty()) {
      expected_ = lower(req_.sha256);
      source_ = "--sha256";
    } else {
      auto consider = [&](const net::header_list& h) {
        if (!expected_.empty()) return;
        if (const std::string* v = net::find_header(h, "X-Linked-Etag")) {
          std::string s = unquote_etag(*v);
          if (net::is_sha256_hex(s)) expected_ = lower(s), source_ = "X-Linked-Etag";
        }
      };
      for (const auto& hop : r.redirects) consider(hop.headers);
      consider(r.headers);
      if (expected_.empty())
        if (const std::string* v = net::find_header(r.headers, "ETag")) {
          std::string s = unquote_etag(*v);
          if (net::is_sha256_hex(s)) expected_ = lower(s), source_ = "ETag";
        }
    }
  }

  bool on_data(std::span<const char> bytes) override {
    const char* p = bytes.data();
    size_t left = bytes.size();
    while (left > 0) {
      ssize_t n = ::write(fd_, p, left);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) {
        const int e = errno;
        std::string why = disk_full(e) ? "the disk is full (" + std::string(std::strerror(e)) + ")" : std::strerror(e);
        throw pull_error("cannot write the download: " + why + " after " + std::to_string(offset_) +
                         " bytes; the partial download is kept in " + part_name() +
                         ": free some space and run the same command again to resume");
      }
      hash_.update({p, static_cast<size_t>(n)});
      p += n;
      left -= static_cast<size_t>(n);
      offset_ += static_cast<uint64_t>(n);
      fetched_ += static_cast<uint64_t>(n);
    }
    obs_.advance(offset_);
    return true;
  }

  std::string part_name() const { return fs::path(meta_path_).replace_extension().string(); }

  int status_ = 0;
  std::string reason_, final_url_, restart_, expected_, source_;
  std::optional<uint64_t> total_;
  uint64_t fetched_ = 0;
  bool complete_ = false;  // a 416 said the part already holds the whole file

  uint64_t offset() const { return offset_; }

 private:
  void truncate_all() {
    if (::ftruncate(fd_, 0) != 0 || ::lseek(fd_, 0, SEEK_SET) != 0)
      throw pull_error("cannot truncate " + part_name() + ": " + std::strerror(errno));
    offset_ = 0;
    hash_.reset();
  }

  const pull_request& req_;
  int fd_;
  uint64_t offset_;
  net::sha256& hash_;
  const part_meta& old_;
  std::string meta_path_;
  pull_observer& obs_;
};

// Hashes the first `n` bytes of fd (the part kept from an earlier run).
void hash_existing(int fd, uint64_t n, net::sha256& hash, const std::string& path) {
  std::vector<char> buf(1 << 20);
  uint64_t done = 0;
  while (done < n) {
    ssize_t r = ::pread(fd, buf.data(), std::min<uint64_t>(buf.size(), n - done), static_cast<off_t>(done));
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) throw pull_error("cannot read " + path + ": " + (r < 0 ? std::strerror(errno) : "short file"));
    hash.update({buf.data(), static_cast<size_t>(r)});
    done += static_cast<uint64_t>(r);
  }
}

std::string http_status_message(const pull_request& req, const part_sink& s) {
  std::string msg = "HTTP " + std::to_string(s.status_) + (s.reason_.empty() ? "" : " " + s.reason_) + " from " +
                    (s.final_url_.empty() ? req.url : s.final_url_);
  if (s.status_ == 404 && !req.hint_404.empty()) msg += " (" + req.hint_404 + ")";
  if ((s.status_ == 401 || s.status_ == 403) && !req.hint_auth.empty()) msg += " (" + req.hint_auth + ")";
  return msg;
}

void fsync_dir(const std::string& dir) {
  int d = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY);
  if (d >= 0) {
    ::fsync(d);
    ::close(d);
  }
}

}  // namespace

std::string format_bytes(uint64_t n) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double v = static_cast<double>(n);
  int u = 0;
  while (v >= 1024 && u < 4) v /= 1024, ++u;
  char buf[32];
  if (u == 0)
    std::snprintf(buf, sizeof buf, "%llu B", static_cast<unsigned long long>(n));
  else
    std::snprintf(buf, sizeof buf, "%.1f %s", v, units[u]);
  return buf;
}

pull_report pull_model(const pull_request& req, pull_observer& obs) {
  if (req.models_dir.empty()) throw pull_error("no models folder: set XDG_DATA_HOME or HOME (or QUICKFILL_MODELS_DIR)");
  std::error_code ec;
  fs::create_directories(req.models_dir, ec);
  if (ec) throw pull_error("cannot create the models folder " + req.models_dir + ": " + ec.message());
  const std::string target = (fs::path(req.models_dir) / (req.name + ".gguf")).string();
  const std::string part = target + ".part", meta = part + ".meta";
  pull_report rep;
  rep.path = target;
  if (fs::exists(target, ec) && !req.force) {
    rep.already_present = true;
    rep.size = fs::file_size(target, ec);
    if (!req.sha256.empty()) {  // the installed file must be the one asked for
      fd_guard in;
      in.fd = ::open(target.c_str(), O_RDONLY | O_CLOEXEC);
      struct stat st {};
      if (in.fd < 0 || ::fstat(in.fd, &st) != 0 || !S_ISREG(st.st_mode))
        throw pull_error("cannot read the installed " + target + " to check --sha256");
      net::sha256 h;
      hash_existing(in.fd, static_cast<uint64_t>(st.st_size), h, target);
      rep.sha256 = h.hex_digest();
      if (rep.sha256 != lower(req.sha256))
        throw pull_error(target + " is already installed and its SHA-256 is " + rep.sha256 + ", not " +
                         lower(req.sha256) + " (--sha256); --force replaces it");
      rep.checked_against = "--sha256";
    }
    return rep;
  }

  fd_guard fd;
  std::string open_error;
  fd.fd = index::open_private_file(part, O_RDWR | O_CREAT, &open_error);  // no link followed; 0600
  if (fd.fd < 0) throw pull_error(open_error);
  if (::flock(fd.fd, LOCK_EX | LOCK_NB) != 0)
    throw pull_error("another pull of " + req.name + " is writing " + part);

  net::sha256 hash;
  for (int attempt = 0;; ++attempt) {
    struct stat st {};
    if (::fstat(fd.fd, &st) != 0) throw pull_error("cannot stat " + part + ": " + std::strerror(errno));
    uint64_t offset = static_cast<uint64_t>(st.st_size);
    part_meta old = read_meta(meta);
    if (offset > 0 && !req.sha256.empty() && !old.sha256.empty() && lower(req.sha256) != old.sha256) {
      if (!req.force)
        throw pull_error("the partial download " + part + " was begun expecting SHA-256 " + old.sha256 + ", not " +
                         lower(req.sha256) + " (--sha256): it is not resumed; --force starts over");
      obs.note("--force: discarding a partial download that expected another SHA-256");
      if (::ftruncate(fd.fd, 0) != 0) throw pull_error("cannot truncate " + part + ": " + std::strerror(errno));
      offset = 0;
      old = {};
    }
    if (offset > 0 && old.url != req.url) {
      obs.note("discarding a partial download of another URL (" + (old.url.empty() ? "unknown" : old.url) + ")");
      if (::ftruncate(fd.fd, 0) != 0) throw pull_error("cannot truncate " + part + ": " + std::strerror(errno));
      offset = 0;
      old = {};
    }
    hash.reset();
    if (offset > 0) {
      obs.note("resuming " + req.name + " at " + format_bytes(offset) + " (" + std::to_string(offset) + " bytes)");
      hash_existing(fd.fd, offset, hash, part);
    }
    if (::lseek(fd.fd, static_cast<off_t>(offset), SEEK_SET) < 0)
      throw pull_error("cannot seek in " + part + ": " + std::strerror(errno));
    net::request_options o = req.http;
    if (offset > 0) {
      o.headers.push_back({"Range", "bytes=" + std::to_string(offset) + "-"});
      const std::string validator = !old.etag.empty() && old.etag.rfind("W/", 0) != 0 ? old.etag : old.last_modified;
      if (!validator.empty()) o.headers.push_back({"If-Range", validator});
    }
    part_sink sink(req, fd.fd, offset, hash, old, meta, obs);
    try {
      net::fetch(req.url, o, sink);
    } catch (const net::http_error& e) {
      obs.finish();
      std::string msg = e.what();
      if (sink.offset() > 0 &&
          (e.kind() == net::error_kind::interrupted || e.kind() == net::error_kind::timeout ||
           e.kind() == net::error_kind::cancelled))
        msg += "; the partial download (" + std::to_string(sink.offset()) + " bytes) is kept in " + part +
               ": run the same command again to resume";
      throw pull_error(msg);
    } catch (...) {
      obs.finish();
      throw;
    }
    obs.finish();
    if (!sink.restart_.empty()) {
      if (attempt > 0) throw pull_error(sink.restart_ + ", again after starting over");
      obs.note(sink.restart_ + ": starting over");
      if (::ftruncate(fd.fd, 0) != 0) throw pull_error("cannot truncate " + part + ": " + std::strerror(errno));
      remove_quietly(meta);
      continue;
    }
    if (sink.complete_) obs.note("the partial download already holds the whole file");
    if (sink.status_ != 200 && sink.status_ != 206 && !sink.complete_) {
      if (sink.offset() == 0) {
        remove_quietly(part);
        remove_quietly(meta);
      }
      throw pull_error(http_status_message(req, sink));
    }
    if (sink.total_ && sink.offset() != *sink.total_)
      throw pull_error("the download ended at " + std::to_string(sink.offset()) + " of " +
                       std::to_string(*sink.total_) + " bytes; run the same command again to resume");
    rep.resumed_from = offset;
    rep.fetched = sink.fetched_;
    rep.size = sink.offset();
    rep.sha256 = hash.hex_digest();
    rep.checked_against = sink.source_;
    if (!sink.expected_.empty() && rep.sha256 != sink.expected_) {
      remove_quietly(part);
      remove_quietly(meta);
      throw pull_error("SHA-256 mismatch for " + req.url + ": expected " + sink.expected_ + " (" + sink.source_ +
                       "), got " + rep.sha256 + "; the download was deleted");
    }
    break;
  }
  if (::fsync(fd.fd) != 0) throw pull_error("cannot flush " + part + ": " + std::strerror(errno));
  try {
    auto g = infer::gguf::file::open(part, infer::gguf::data_storage::mapped);
    rep.architecture = g->get_string("general.architecture").value_or("");
  } catch (const std::exception& e) {
    remove_quietly(part);
    remove_quietly(meta);
    throw pull_error("the file at " + req.url + " is not a GGUF model (" + e.what() + "); the download was deleted");
  }
  fs::rename(part, target, ec);
  if (ec) throw pull_error("cannot rename " + part + " to " + target + ": " + ec.message());
  fsync_dir(req.models_dir);
  remove_quietly(meta);
  return rep;
}

}  // namespace qf::cli
