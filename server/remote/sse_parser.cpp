// The SSE parser (see sse_parser.h): a byte loop over line ends, one line
// handled at a time.
#include "server/remote/sse_parser.h"

#include <cctype>

namespace qf::remote {

namespace {

// At most 40 bytes of a line, non-printable bytes as \xNN.
std::string excerpt(std::string_view l) {
  static const char* hex = "0123456789abcdef";
  std::string out;
  for (std::size_t i = 0; i < l.size() && i < 40; ++i) {
    const auto c = static_cast<unsigned char>(l[i]);
    if (c >= 0x20 && c < 0x7f) {
      out += static_cast<char>(c);
    } else {
      out += "\\x";
      out += hex[c >> 4];
      out += hex[c & 15];
    }
  }
  if (l.size() > 40) out += "...";
  return out;
}

}  // namespace

void sse_parser::fail(const std::string& why, std::string_view l) const {
  throw sse_error("malformed event stream at line " + std::to_string(line_no_) + ": " + why +
                  (l.empty() ? std::string() : " ('" + excerpt(l) + "')"));
}

void sse_parser::feed(std::string_view bytes, std::vector<sse_event>& out) {
  std::size_t start = 0;
  for (std::size_t i = 0; i < bytes.size(); ++i) {
    const char c = bytes[i];
    if (c == '\n' && after_cr_) {  // the LF of a CR LF pair whose CR ended the line
      after_cr_ = false;
      start = i + 1;
      continue;
    }
    after_cr_ = false;
    if (c == '\0') {
      ++line_no_;
      pending_.append(bytes.substr(start, i - start));
      fail("a NUL byte (this is not a text event stream)", pending_);
    }
    if (c != '\n' && c != '\r') continue;
    after_cr_ = c == '\r';
    pending_.append(bytes.substr(start, i - start));
    start = i + 1;
    if (pending_.size() > limits_.max_line) {
      ++line_no_;
      fail("a line of more than " + std::to_string(limits_.max_line) + " bytes", pending_);
    }
    std::string l;
    l.swap(pending_);
    line(l, out);
  }
  pending_.append(bytes.substr(start));
  if (pending_.size() > limits_.max_line) {
    ++line_no_;
    fail("a line of more than " + std::to_string(limits_.max_line) + " bytes", pending_);
  }
}

void sse_parser::line(std::string_view l, std::vector<sse_event>& out) {
  ++line_no_;
  if (l.empty()) {  // dispatch
    if (has_data_) {
      sse_event e;
      e.type = type_.empty() ? "message" : type_;
      e.data = std::move(data_);
      e.id = id_;
      out.push_back(std::move(e));
    }
    data_.clear();
    type_.clear();
    has_data_ = false;
    in_event_ = false;
    return;
  }
  if (l.front() == ':') return;  // a comment
  const std::size_t colon = l.find(':');
  const std::string_view name = l.substr(0, colon);
  std::string_view value = colon == std::string_view::npos ? std::string_view() : l.substr(colon + 1);
  if (!value.empty() && value.front() == ' ') value.remove_prefix(1);
  if (name == "data") {
    if (has_data_) data_ += '\n';
    data_.append(value);
    has_data_ = true;
    if (data_.size() > limits_.max_event)
      fail("an event of more than " + std::to_string(limits_.max_event) + " bytes", {});
  } else if (name == "event") {
    type_ = std::string(value);
  } else if (name == "id") {
    if (value.find('\0') == std::string_view::npos) id_ = std::string(value);
  } else if (name == "retry") {
    bool digits = !value.empty();
    for (char ch : value) digits = digits && std::isdigit(static_cast<unsigned char>(ch));
    if (digits && value.size() < 12) retry_ms_ = std::stoll(std::string(value));
  } else {
    fail("not an SSE field (expected data:, event:, id:, retry: or a ':' comment)", l);
  }
  in_event_ = true;
}

void sse_parser::finish() {
  if (!pending_.empty()) {
    ++line_no_;
    std::string l;
    l.swap(pending_);
    // An unterminated last line: a field without its line end is cut.
    if (l.front() == ':') return;
    fail("the stream ended in the middle of a line", l);
  }
  if (in_event_ && has_data_) fail("the stream ended inside an event (no blank line after its data)", {});
}

}  // namespace qf::remote
