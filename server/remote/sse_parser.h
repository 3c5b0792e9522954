// An incremental parser of Server-Sent Events (the text/event-stream format of
// the WHATWG HTML standard), as streamed completion servers send them.
//
// Bytes go in as they arrive, in pieces of any size (a line, or a CR LF pair,
// may be split across pieces); complete events come out. Lines end in LF, CR
// LF or a lone CR. "data:" lines accumulate (joined by LF) until a blank line
// dispatches the event; "event:", "id:" and "retry:" are kept; lines starting
// with ':' are comments (keep-alives) and are skipped; one space after the
// colon is dropped. A blank line with no data dispatches nothing.
//
// Unlike a browser, the parser is strict about what is not SSE, because a
// completion server that answers something else (an HTML error page, a bare
// JSON body, binary garbage) must fail clearly rather than yield nothing:
// a line whose field name is not one of the four, a NUL byte, a line longer
// than max_line bytes or an event larger than max_event bytes is an error
// (sse_error, naming the line number and a short, printable excerpt). finish()
// at the end of the stream says whether it stopped inside an event (data
// without the blank line that ends it), which means the stream was cut.
#pragma once

#include <cstddef>
#include <functional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace qf::remote {

struct sse_event {
  std::string type = "message";  // the "event:" field, "message" when absent
  std::string data;              // "data:" lines joined by LF
  std::string id;                // the last "id:" seen (it persists across events)
};

class sse_error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class sse_parser {
 public:
  struct limits {
    std::size_t max_line = 1 << 20;
    std::size_t max_event = 4 << 20;
  };
  sse_parser() : sse_parser(limits{}) {}
  explicit sse_parser(limits l) : limits_(l) {}

  // Parses `bytes` and appends the events they complete to `out`. Throws
  // sse_error on a malformed stream (the parser is then unusable).
  void feed(std::string_view bytes, std::vector<sse_event>& out);
  // The stream ended: throws sse_error when an event was left unfinished
  // (its data arrived without the blank line that ends it).
  void finish();

  std::size_t lines() const { return line_no_; }
  // The "retry:" reconnection time the server asked for, in ms (-1: none).
  long long retry_ms() const { return retry_ms_; }

 private:
  void line(std::string_view l, std::vector<sse_event>& out);
  [[noreturn]] void fail(const std::string& why, std::string_view l) const;

  limits limits_;
  std::string pending_;       // the current line so far
  bool after_cr_ = false;     // the previous byte was a CR (an LF next belongs to it)
  bool in_event_ = false;     // a field arrived since the last dispatch
  bool has_data_ = false;
  std::string data_, type_, id_;
  std::size_t line_no_ = 0;
  long long retry_ms_ = -1;
};

}  // namespace qf::remote
