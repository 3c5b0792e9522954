// Helpers shared by the libFuzzer targets of tests/fuzz: a strict UTF-8
// check written independently of the code under test (it is an oracle), a
// failure report that aborts so libFuzzer records the input, and an
// in-memory file for readers that only take a path.
#pragma once

#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

namespace qf::fuzz {

// Prints what broke and aborts: libFuzzer then saves the input as a crash.
[[noreturn]] inline void fail(const char* what, std::string_view detail = {}) {
  std::fprintf(stderr, "fuzz oracle failed: %s\n", what);
  if (!detail.empty()) {
    std::string shown(detail.substr(0, 400));
    for (char& c : shown)
      if (static_cast<unsigned char>(c) < 0x20 && c != '\n') c = '?';
    std::fprintf(stderr, "  detail: %s\n", shown.c_str());
  }
  std::abort();
}

#define QF_FUZZ_CHECK(cond, detail) \
  do {                              \
    if (!(cond)) ::qf::fuzz::fail(#cond, (detail)); \
  } while (0)

// Strict UTF-8 (RFC 3629): no overlong forms, no surrogates, nothing above U+10FFFF.
inline bool valid_utf8(std::string_view s) {
  std::size_t i = 0;
  while (i < s.size()) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c < 0x80) {
      ++i;
      continue;
    }
    std::size_t n;
    std::uint32_t cp;
    if (c >= 0xC2 && c <= 0xDF) n = 2, cp = c & 0x1F;
    else if (c >= 0xE0 && c <= 0xEF) n = 3, cp = c & 0x0F;
    else if (c >= 0xF0 && c <= 0xF4) n = 4, cp = c & 0x07;
    else return false;
    if (i + n > s.size()) return false;
    for (std::size_t k = 1; k < n; ++k) {
      const auto d = static_cast<unsigned char>(s[i + k]);
      if ((d & 0xC0) != 0x80) return false;
      cp = (cp << 6) | (d & 0x3F);
    }
    if ((n == 3 && cp < 0x800) || (n == 4 && (cp < 0x10000 || cp > 0x10FFFF)) || (cp >= 0xD800 && cp <= 0xDFFF))
      return false;
    i += n;
  }
  return true;
}

// Length of the valid UTF-8 sequence starting at s[i], 0 when none starts there.
inline std::size_t utf8_char_len(std::string_view s, std::size_t i) {
  for (std::size_t n = 1; n <= 4 && i + n <= s.size(); ++n)
    if (valid_utf8(s.substr(i, n))) return n;
  return 0;
}

// Keeps only the valid UTF-8 characters of `s` (drops every other byte).
inline std::string keep_valid_utf8(std::string_view s) {
  std::string out;
  for (std::size_t i = 0; i < s.size();) {
    const std::size_t n = utf8_char_len(s, i);
    if (n == 0) {
      ++i;
      continue;
    }
    out.append(s.substr(i, n));
    i += n;
  }
  return out;
}

// The bytes as a file that path-based readers can open and map: an anonymous
// in-memory file reached through /proc/self/fd (nothing touches the disk).
class memory_file {
 public:
  memory_file(const std::uint8_t* data, std::size_t size) {
    fd_ = ::memfd_create("qf-fuzz", 0);
    if (fd_ < 0) fail("memfd_create");
    std::size_t done = 0;
    while (done < size) {
      const ssize_t n = ::write(fd_, data + done, size - done);
      if (n <= 0) fail("write to memfd");
      done += static_cast<std::size_t>(n);
    }
    path_ = "/proc/self/fd/" + std::to_string(fd_);
  }
  ~memory_file() { ::close(fd_); }
  memory_file(const memory_file&) = delete;
  memory_file& operator=(const memory_file&) = delete;
  const std::string& path() const { return path_; }
  int fd() const { return fd_; }

 private:
  int fd_ = -1;
  std::string path_;
};

}  // namespace qf::fuzz
