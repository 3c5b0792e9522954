// Content-Length framing over file descriptors: the transport knows bytes and
// message boundaries, nothing about JSON-RPC.
//
// A frame is a header block ("Name: value\r\n" lines ended by an empty line)
// followed by exactly Content-Length bytes. Content-Type and unknown headers
// are accepted and ignored. The reader is blocking (it runs on its own thread)
// but interruptible: it polls the input together with a wake-up pipe, so the
// owner can stop it without closing the descriptor under it.
//
// Resynchronization. After any framing problem the reader does not trust the
// stream position: it drops input up to the next "Content-Length:" header
// line (the name in any case, anywhere in the input, up to a line break) and
// starts the next frame there; a bad value there is reported in turn.
//  * bad_header: a header block without a usable Content-Length (missing, not
//    a number, conflicting, a line without a colon, no end within 64 KiB).
//    Whatever follows it (typically its body) is dropped up to the next header.
//  * too_large: a declared length above the cap is refused as soon as the
//    header is read; the body is neither read into memory nor waited for, it is
//    dropped like any other input before the next header.
//  * bad_body: a body that contains a "Content-Length: N" header line of its
//    own. A JSON body never can (JSON strings cannot hold a raw line break and
//    the header name is not JSON outside one), so the declared length was too
//    long and swallowed the next frame; the body is dropped and reading resumes
//    at that header, as soon as it has arrived (the reader does not wait for
//    the rest of the wrong length).
//  * skipped: reported when a stretch of dropped input ends (the next header
//    was found, or the input ended), with its size and its first bytes, so the
//    owner can tell which document a lost message was about.
// The writer frames and writes whole messages under a mutex, retrying short
// writes. On a non-blocking descriptor (a daemon session's socket) it waits
// in poll() for room (never spins on EAGAIN); with a timeout, a peer that
// takes nothing for that long makes the write fail for good (timed_out()).
#pragma once

#include <atomic>
#include <cstddef>
#include <mutex>
#include <string>
#include <string_view>

namespace qf::lsp {

inline constexpr std::size_t default_max_message_bytes = 64u << 20;  // 64 MiB
// How many of the first dropped bytes a bad_body or skipped result carries.
inline constexpr std::size_t dropped_prefix_bytes = 4096;

struct read_result {
  enum class kind { message, eof, too_large, bad_header, bad_body, skipped, interrupted, io_error };
  kind what = kind::eof;
  std::string body;    // the payload when what == message
  std::string error;   // human-readable description otherwise (printable ASCII)
  std::size_t declared_length = 0;
  std::string dropped;            // bad_body, skipped: the first bytes of the dropped input
  std::size_t dropped_bytes = 0;  // bad_body, skipped: how many bytes were dropped
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
  // Drops input up to the next Content-Length header line; false (with `out`
  // set) when there is something to report first.
  bool resync(read_result& out);
  void fill_failed(fill f, read_result& out);
  void note_dropped(std::size_t n);  // the n bytes at pos_ are being dropped
  bool report_dropped(read_result& out);

  int fd_;
  int wake_[2] = {-1, -1};
  std::size_t max_bytes_;
  std::string buf_;   // bytes read but not yet consumed
  std::size_t pos_ = 0;
  bool resyncing_ = false;
  std::string dropped_;            // first bytes of the stretch being dropped
  std::size_t dropped_bytes_ = 0;  // its length so far
  std::size_t quiet_ = 0;          // bytes of a reported bad block, not counted as dropped
  std::string drop_cause_;         // the problem that started the drop
};

class fd_writer {
 public:
  // timeout_ms < 0: wait for room as long as it takes.
  explicit fd_writer(int fd, int timeout_ms = -1) : fd_(fd), timeout_ms_(timeout_ms) {}
  // Writes one framed message; false when the descriptor is gone, or when
  // the peer took no byte for timeout_ms (then every later call fails at once).
  bool write_message(std::string_view body);
  bool timed_out() const { return timed_out_.load(); }

 private:
  int fd_;
  int timeout_ms_;
  std::atomic<bool> timed_out_{false};
  std::mutex mu_;
};

// Frames a body as "Content-Length: N\r\n\r\n<body>".
std::string frame_message(std::string_view body);

// Where the first "Content-Length: N" header line (the name in any case,
// blanks around the digits, ended by "\r\n" or "\n") starts in `s` at or after
// `from`; with strict == false any value up to a line break counts. When
// there is none, `complete` is false and `pos` is where one might still start
// once more bytes arrive (s.size() when nowhere).
struct header_scan {
  std::size_t pos = 0;
  bool complete = false;
};
header_scan find_length_header(std::string_view s, std::size_t from = 0, bool strict = true);

}  // namespace qf::lsp
