// Content-Length framing over file descriptors: the transport knows bytes and
// message boundaries, nothing about JSON-RPC.
//
// A frame is a header block ("Name: value\r\n" lines ended by an empty line)
// followed by exactly Content-Length bytes. Content-Type and unknown headers
// are accepted and ignored. The reader is blocking (it runs on its own thread)
// but interruptible: it polls the input together with a wake-up pipe, so the
// owner can stop it without closing the descriptor under it. A body larger than
// the configured limit is consumed and dropped (the stream stays in sync) and
// reported as too_large; a header block without a usable Content-Length is
// reported as bad_header and reading continues after it. The writer frames and
// writes whole messages under a mutex, retrying short writes.
#pragma once

#include <cstddef>
#include <mutex>
#include <string>
#include <string_view>

namespace qf::lsp {

inline constexpr std::size_t default_max_message_bytes = 64u << 20;  // 64 MiB

struct read_result {
  enum class kind { message, eof, too_large, bad_header, interrupted, io_error };
  kind what = kind::eof;
  std::string body;   // the payload when what == message
  std::string error;  // human-readable description otherwise
  std::size_t declared_length = 0;
};

class fd_reader {
 public:
  explicit fd_reader(int fd, std::size_t max_message_bytes = default_max_message_bytes);
  ~fd_reader();
  fd_reader(const fd_reader&) = delete;
  fd_reader& operator=(const fd_reader&) = delete;

  // Blocks until one frame (or an end/error condition) is available.
  read_result read_message();
  // Makes a blocked or future read_message() return `interrupted`. Thread-safe.
  void interrupt();
  std::size_t max_message_bytes() const { return max_bytes_; }

 private:
  enum class fill { ok, eof, interrupted, error };
  fill fill_buffer();  // appends at least one byte to buf_
  bool read_header_block(std::string& block, read_result& out);

  int fd_;
  int wake_[2] = {-1, -1};
  std::size_t max_bytes_;
  std::string buf_;   // bytes read but not yet consumed
  std::size_t pos_ = 0;
};

class fd_writer {
 public:
  explicit fd_writer(int fd) : fd_(fd) {}
  // Writes one framed message; false when the descriptor is gone.
  bool write_message(std::string_view body);

 private:
  int fd_;
  std::mutex mu_;
};

// Frames a body as "Content-Length: N\r\n\r\n<body>".
std::string frame_message(std::string_view body);

}  // namespace qf::lsp
