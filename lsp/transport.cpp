// Content-Length framing over file descriptors (see transport.h).
#include "lsp/transport.h"

#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <algorithm>
#include <charconv>
#include <cstring>

namespace qf::lsp {

namespace {

constexpr std::size_t max_header_block = 64 * 1024;

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

bool iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    char x = a[i], y = b[i];
    if (x >= 'A' && x <= 'Z') x = char(x - 'A' + 'a');
    if (y >= 'A' && y <= 'Z') y = char(y - 'A' + 'a');
    if (x != y) return false;
  }
  return true;
}

// Finds the end of a header block starting at `from`: returns the index just
// past the blank line, and npos when the block is not complete yet.
std::size_t find_block_end(const std::string& buf, std::size_t from) {
  for (std::size_t i = from; i < buf.size(); ++i) {
    if (buf[i] != '\n') continue;
    // A blank line is "\n\n" or "\n\r\n".
    if (i + 1 < buf.size() && buf[i + 1] == '\n') return i + 2;
    if (i + 2 < buf.size() && buf[i + 1] == '\r' && buf[i + 2] == '\n') return i + 3;
  }
  return std::string::npos;
}

// Non-printable and non-ASCII bytes as \xNN, so that an error message quoting
// raw input is always valid UTF-8.
std::string printable(std::string_view s, std::size_t max_bytes) {
  static const char hex[] = "0123456789abcdef";
  std::string out;
  for (std::size_t i = 0; i < s.size() && i < max_bytes; ++i) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    if (c >= 0x20 && c < 0x7f && c != '\\') {
      out += static_cast<char>(c);
    } else {
      out += "\\x";
      out += hex[c >> 4];
      out += hex[c & 15];
    }
  }
  if (s.size() > max_bytes) out += "...";
  return out;
}

char lower(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }
bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_blank(char c) { return c == ' ' || c == '\t'; }

constexpr std::string_view length_name = "content-length";
constexpr std::size_t max_loose_value = 128;

enum class match { no, yes, partial };

// Whether a "Content-Length: N" line starts at s[i] (s[i..] is
// "content-length" in any case). `strict`: the value must be digits; otherwise
// any value up to the line end will do.
match length_line_at(std::string_view s, std::size_t i, bool strict) {
  std::size_t j = i + length_name.size();
  const std::size_t n = s.size();
  if (j >= n) return match::partial;
  if (s[j] != ':') return match::no;
  ++j;
  if (!strict) {
    // A header value is short: a "line" running on is text that happens to
    // hold the name (inside a JSON string, say), not a header.
    for (const std::size_t end = j + max_loose_value; j < n && j < end; ++j)
      if (s[j] == '\n') return match::yes;
    return j == n ? match::partial : match::no;
  }
  while (j < n && is_blank(s[j])) ++j;
  if (j == n) return match::partial;
  if (!is_digit(s[j])) return match::no;
  while (j < n && is_digit(s[j])) ++j;
  while (j < n && is_blank(s[j])) ++j;
  if (j == n) return match::partial;
  if (s[j] == '\n') return match::yes;
  if (s[j] != '\r') return match::no;
  if (j + 1 == n) return match::partial;
  return s[j + 1] == '\n' ? match::yes : match::no;
}

bool name_at(std::string_view s, std::size_t i, std::size_t len) {
  for (std::size_t k = 0; k < len; ++k)
    if (lower(s[i + k]) != length_name[k]) return false;
  return true;
}

}  // namespace

header_scan find_length_header(std::string_view s, std::size_t from, bool strict) {
  const std::size_t name_len = length_name.size();
  const std::size_t n = s.size();
  if (from > n) from = n;
  // Candidates are found by their colon; JSON bodies have few of those.
  for (std::size_t c = from + name_len; c < n;) {
    const void* hit = std::memchr(s.data() + c, ':', n - c);
    if (!hit) break;
    c = static_cast<std::size_t>(static_cast<const char*>(hit) - s.data());
    const std::size_t start = c - name_len;
    if (name_at(s, start, name_len)) {
      const match m = length_line_at(s, start, strict);
      if (m == match::yes) return {start, true};
      if (m == match::partial) return {start, false};
    }
    ++c;
  }
  // A name cut off by the end of the input may still become a header.
  for (std::size_t t = n > from + name_len ? n - name_len : from; t < n; ++t)
    if (name_at(s, t, n - t)) return {t, false};
  return {n, false};
}

std::string frame_message(std::string_view body) {
  std::string out = "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n";
  out.append(body);
  return out;
}

fd_reader::fd_reader(int fd, std::size_t max_message_bytes) : fd_(fd), max_bytes_(max_message_bytes) {
  if (::pipe(wake_) == 0) {
    ::fcntl(wake_[0], F_SETFL, O_NONBLOCK);
    ::fcntl(wake_[1], F_SETFL, O_NONBLOCK);
  }
}

fd_reader::~fd_reader() {
  if (wake_[0] >= 0) ::close(wake_[0]);
  if (wake_[1] >= 0) ::close(wake_[1]);
}

void fd_reader::interrupt() {
  if (wake_[1] >= 0) {
    char c = 1;
    [[maybe_unused]] auto n = ::write(wake_[1], &c, 1);
  }
}

fd_reader::fill fd_reader::fill_buffer() {
  if (pos_ > 0 && pos_ >= buf_.size() / 2) {
    buf_.erase(0, pos_);
    pos_ = 0;
  }
  for (;;) {
    pollfd fds[2] = {{fd_, POLLIN, 0}, {wake_[0], POLLIN, 0}};
    int n = ::poll(fds, wake_[0] >= 0 ? 2 : 1, -1);
    if (n < 0) {
      if (errno == EINTR) continue;
      return fill::error;
    }
    if (wake_[0] >= 0 && (fds[1].revents & POLLIN)) return fill::interrupted;
    if (fds[0].revents & (POLLIN | POLLHUP | POLLERR)) {
      char tmp[65536];
      ssize_t got = ::read(fd_, tmp, sizeof tmp);
      if (got < 0) {
        if (errno == EINTR || errno == EAGAIN) continue;
        return fill::error;
      }
      if (got == 0) return fill::eof;
      buf_.append(tmp, static_cast<std::size_t>(got));
      return fill::ok;
    }
    if (fds[0].revents & POLLNVAL) return fill::error;
  }
}

void fd_reader::fill_failed(fill f, read_result& out) {
  switch (f) {
    case fill::ok: break;
    case fill::eof: out.what = read_result::kind::eof; break;
    case fill::interrupted: out.what = read_result::kind::interrupted; break;
    case fill::error:
      out.what = read_result::kind::io_error;
      out.error = std::string("read failed: ") + std::strerror(errno);
      break;
  }
}

void fd_reader::note_dropped(std::size_t n) {
  const std::size_t quiet = std::min(quiet_, n);
  quiet_ -= quiet;
  const std::size_t from = pos_ + quiet;
  n -= quiet;
  if (dropped_.size() < dropped_prefix_bytes)
    dropped_.append(buf_, from, std::min(n, dropped_prefix_bytes - dropped_.size()));
  dropped_bytes_ += n;
}

bool fd_reader::report_dropped(read_result& out) {
  quiet_ = 0;
  if (dropped_bytes_ == 0) return false;
  out.what = read_result::kind::skipped;
  out.dropped = std::move(dropped_);
  out.dropped_bytes = dropped_bytes_;
  out.error = "dropped " + std::to_string(dropped_bytes_) + " bytes of input up to the next Content-Length header";
  if (!drop_cause_.empty()) out.error += " after: " + drop_cause_;
  dropped_.clear();
  dropped_bytes_ = 0;
  return true;
}

bool fd_reader::resync(read_result& out) {
  for (;;) {
    const header_scan h = find_length_header(std::string_view(buf_).substr(pos_), 0, /*strict=*/false);
    note_dropped(h.pos);
    pos_ += h.pos;
    if (h.complete) {
      resyncing_ = false;
      return !report_dropped(out);
    }
    if (buf_.size() - pos_ > max_header_block) {  // a candidate whose line never ends
      note_dropped(1);
      ++pos_;
      continue;
    }
    const fill f = fill_buffer();
    if (f == fill::ok) continue;
    if (f == fill::eof) {
      note_dropped(buf_.size() - pos_);
      pos_ = buf_.size();
      if (report_dropped(out)) return false;
    }
    fill_failed(f, out);
    return false;
  }
}

bool fd_reader::read_header_block(std::string& block, read_result& out) {
  for (;;) {
    // Skip blank lines left between frames (some clients send an extra CRLF).
    while (pos_ < buf_.size() && (buf_[pos_] == '\r' || buf_[pos_] == '\n')) ++pos_;
    std::size_t end = find_block_end(buf_, pos_);
    if (end != std::string::npos) {
      block.assign(buf_, pos_, end - pos_);
      pos_ = end;
      return true;
    }
    if (buf_.size() - pos_ > max_header_block) {
      out.what = read_result::kind::bad_header;
      out.error = "header block longer than " + std::to_string(max_header_block) + " bytes without an empty line";
      block.assign(buf_, pos_, buf_.size() - pos_);
      return false;
    }
    const fill f = fill_buffer();
    if (f == fill::ok) continue;
    fill_failed(f, out);
    if (f == fill::eof && pos_ < buf_.size()) out.error = "input ended inside a header block";
    return false;
  }
}

read_result fd_reader::read_message() {
  read_result out;
  if (resyncing_ && !resync(out)) return out;

  std::string block;
  if (!read_header_block(block, out)) {
    if (out.what == read_result::kind::bad_header) {
      // Resume the search one byte into the bad block: a header may start
      // later in it (after garbage that a wrong length left behind).
      pos_ += 1;
      quiet_ = block.size() - 1;
      resyncing_ = true;
      drop_cause_ = out.error;
    }
    return out;
  }
  // A bad block: search for the next header from its second byte on; the
  // block itself was reported, so it does not count as dropped input.
  auto bad_header = [&](std::string error) {
    out.what = read_result::kind::bad_header;
    out.error = std::move(error);
    pos_ -= block.size() - 1;
    quiet_ = block.size() - 1;
    resyncing_ = true;
    drop_cause_ = out.error;
    return out;
  };

  // Parse the header lines.
  bool have_length = false;
  std::size_t length = 0;
  std::string_view rest(block);
  while (!rest.empty()) {
    std::size_t nl = rest.find('\n');
    std::string_view line = rest.substr(0, nl);
    rest = nl == std::string_view::npos ? std::string_view() : rest.substr(nl + 1);
    line = trim(line);
    if (line.empty()) continue;
    std::size_t colon = line.find(':');
    if (colon == std::string_view::npos) return bad_header("malformed header line '" + printable(line, 80) + "'");
    std::string_view name = trim(line.substr(0, colon));
    std::string_view value = trim(line.substr(colon + 1));
    if (!iequals(name, "Content-Length")) continue;  // Content-Type and others are ignored
    std::size_t v = 0;
    auto [p, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
    if (value.empty() || ec != std::errc() || p != value.data() + value.size())
      return bad_header("invalid Content-Length value '" + printable(value, 40) + "'");
    if (have_length && v != length) return bad_header("conflicting Content-Length headers");
    have_length = true;
    length = v;
  }
  if (!have_length) return bad_header("header block has no Content-Length");
  out.declared_length = length;

  if (length > max_bytes_) {
    // Refused at once: the body is dropped like any input before the next header.
    out.what = read_result::kind::too_large;
    out.error = "message of " + std::to_string(length) + " bytes exceeds the limit of " +
                std::to_string(max_bytes_) + " bytes";
    resyncing_ = true;
    drop_cause_ = out.error;
    return out;
  }

  std::size_t need = length;
  std::size_t scanned = 0;  // out.body before this holds no header line
  auto swallowed_header = [&]() {
    const header_scan h = find_length_header(out.body, scanned);
    scanned = h.pos;
    if (!h.complete) return false;
    // Put the header and what follows back in front of the unread input.
    buf_ = out.body.substr(h.pos) + buf_.substr(pos_);
    pos_ = 0;
    out.what = read_result::kind::bad_body;
    out.error = "the body of a message declared as " + std::to_string(length) +
                " bytes holds a Content-Length header at byte " + std::to_string(h.pos) +
                ", so the declared length was wrong; reading resumes at that header";
    out.dropped_bytes = h.pos;
    out.dropped = out.body.substr(0, std::min(h.pos, dropped_prefix_bytes));
    out.body.clear();
    return true;
  };
  while (need > 0) {
    std::size_t avail = buf_.size() - pos_;
    if (avail > 0) {
      std::size_t take = avail < need ? avail : need;
      out.body.append(buf_, pos_, take);
      pos_ += take;
      need -= take;
      continue;
    }
    // Before waiting for more: a header inside the body means the length was wrong.
    if (swallowed_header()) return out;
    const fill f = fill_buffer();
    if (f == fill::ok) continue;
    fill_failed(f, out);
    if (f == fill::eof)
      out.error = "input ended inside a message body (" + std::to_string(length - need) + " of " +
                  std::to_string(length) + " bytes)";
    out.body.clear();
    return out;
  }
  if (swallowed_header()) return out;
  out.what = read_result::kind::message;
  return out;
}

bool fd_writer::write_message(std::string_view body) {
  std::string framed = frame_message(body);
  std::lock_guard<std::mutex> lock(mu_);
  if (timed_out_.load()) return false;
  const char* p = framed.data();
  std::size_t left = framed.size();
  while (left > 0) {
    ssize_t n = ::write(fd_, p, left);
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno != EAGAIN && errno != EWOULDBLOCK) return false;
      // Full: sleep until the peer makes room (a busy retry would spin a core).
      pollfd pfd{fd_, POLLOUT, 0};
      const int r = ::poll(&pfd, 1, timeout_ms_);
      if (r < 0 && errno != EINTR) return false;
      if (r == 0) {
        timed_out_.store(true);
        errno = ETIMEDOUT;
        return false;
      }
      if (r > 0 && (pfd.revents & (POLLERR | POLLNVAL))) return false;
      continue;
    }
    p += n;
    left -= static_cast<std::size_t>(n);
  }
  return true;
}

}  // namespace qf::lsp
