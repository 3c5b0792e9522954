// Content-Length framing over file descriptors (see transport.h).
#include "lsp/transport.h"

#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <cerrno>
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

}  // namespace

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
      pos_ = buf_.size();
      return false;
    }
    switch (fill_buffer()) {
      case fill::ok: break;
      case fill::eof:
        out.what = read_result::kind::eof;
        if (pos_ < buf_.size()) out.error = "input ended inside a header block";
        return false;
      case fill::interrupted: out.what = read_result::kind::interrupted; return false;
      case fill::error:
        out.what = read_result::kind::io_error;
        out.error = std::string("read failed: ") + std::strerror(errno);
        return false;
    }
  }
}

read_result fd_reader::read_message() {
  read_result out;
  std::string block;
  if (!read_header_block(block, out)) return out;

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
    if (colon == std::string_view::npos) {
      out.what = read_result::kind::bad_header;
      out.error = "malformed header line '" + std::string(line.substr(0, 80)) + "'";
      return out;
    }
    std::string_view name = trim(line.substr(0, colon));
    std::string_view value = trim(line.substr(colon + 1));
    if (!iequals(name, "Content-Length")) continue;  // Content-Type and others are ignored
    std::size_t v = 0;
    auto [p, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
    if (value.empty() || ec != std::errc() || p != value.data() + value.size()) {
      out.what = read_result::kind::bad_header;
      out.error = "invalid Content-Length value '" + std::string(value.substr(0, 40)) + "'";
      return out;
    }
    if (have_length && v != length) {
      out.what = read_result::kind::bad_header;
      out.error = "conflicting Content-Length headers";
      return out;
    }
    have_length = true;
    length = v;
  }
  if (!have_length) {
    out.what = read_result::kind::bad_header;
    out.error = "header block has no Content-Length";
    return out;
  }
  out.declared_length = length;

  const bool keep = length <= max_bytes_;
  std::size_t need = length;
  while (need > 0) {
    std::size_t avail = buf_.size() - pos_;
    if (avail > 0) {
      std::size_t take = avail < need ? avail : need;
      if (keep) out.body.append(buf_, pos_, take);
      pos_ += take;
      need -= take;
      continue;
    }
    if (!keep) {  // drop what we have so far so a huge body never accumulates
      buf_.clear();
      pos_ = 0;
    }
    switch (fill_buffer()) {
      case fill::ok: break;
      case fill::eof:
        out.what = read_result::kind::eof;
        out.error = "input ended inside a message body (" + std::to_string(length - need) + " of " +
                    std::to_string(length) + " bytes)";
        out.body.clear();
        return out;
      case fill::interrupted: out.what = read_result::kind::interrupted; return out;
      case fill::error:
        out.what = read_result::kind::io_error;
        out.error = std::string("read failed: ") + std::strerror(errno);
        return out;
    }
  }
  if (!keep) {
    out.what = read_result::kind::too_large;
    out.error = "message of " + std::to_string(length) + " bytes exceeds the limit of " +
                std::to_string(max_bytes_) + " bytes";
    return out;
  }
  out.what = read_result::kind::message;
  return out;
}

bool fd_writer::write_message(std::string_view body) {
  std::string framed = frame_message(body);
  std::lock_guard<std::mutex> lock(mu_);
  const char* p = framed.data();
  std::size_t left = framed.size();
  while (left > 0) {
    ssize_t n = ::write(fd_, p, left);
    if (n < 0) {
      if (errno == EINTR || errno == EAGAIN) continue;
      return false;
    }
    p += n;
    left -= static_cast<std::size_t>(n);
  }
  return true;
}

}  // namespace qf::lsp
