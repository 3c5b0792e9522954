// The SSE parser: line ends of every kind, pieces split anywhere, comments,
// multi-line data, and clear errors for what is not an event stream.
#include <gtest/gtest.h>

#include "server/remote/sse_parser.h"

using qf::remote::sse_error;
using qf::remote::sse_event;
using qf::remote::sse_parser;

namespace {

std::vector<sse_event> parse_all(std::string_view s, std::size_t piece = SIZE_MAX) {
  sse_parser p;
  std::vector<sse_event> out;
  for (std::size_t i = 0; i < s.size(); i += piece) p.feed(s.substr(i, piece), out);
  p.finish();
  return out;
}

std::string error_of(std::string_view s) {
  try {
    parse_all(s);
  } catch (const sse_error& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST(SseParser, EventsWithLfCrLfAndCr) {
  for (const char* eol : {"\n", "\r\n", "\r"}) {
    const std::string e = eol;
    const std::string s = "data: one" + e + e + "event: update" + e + "data: two" + e + "id: 7" + e + e;
    const auto ev = parse_all(s);
    ASSERT_EQ(ev.size(), 2u) << "eol " << (e == "\n" ? "LF" : e == "\r" ? "CR" : "CRLF");
    EXPECT_EQ(ev[0].data, "one");
    EXPECT_EQ(ev[0].type, "message");
    EXPECT_EQ(ev[1].data, "two");
    EXPECT_EQ(ev[1].type, "update");
    EXPECT_EQ(ev[1].id, "7");
  }
}

TEST(SseParser, SplitAnywhereGivesTheSameEvents) {
  const std::string s = ": keep-alive\r\n\r\ndata: {\"content\":\"a\"}\r\n\r\ndata:b\r\ndata: c\r\n\r\n";
  const auto whole = parse_all(s);
  ASSERT_EQ(whole.size(), 2u);
  for (std::size_t piece = 1; piece <= s.size(); ++piece) {
    const auto split = parse_all(s, piece);
    ASSERT_EQ(split.size(), 2u) << "piece " << piece;
    EXPECT_EQ(split[0].data, "{\"content\":\"a\"}");
    EXPECT_EQ(split[1].data, "b\nc") << "piece " << piece;
  }
}

TEST(SseParser, CommentsAndBlankLinesDispatchNothing) {
  EXPECT_TRUE(parse_all(":\n\n: ping\n\n\n\n").empty());
}

TEST(SseParser, OnlyOneSpaceAfterTheColonIsDropped) {
  const auto ev = parse_all("data:  two spaces\ndata\n\n");
  ASSERT_EQ(ev.size(), 1u);
  EXPECT_EQ(ev[0].data, " two spaces\n");
}

TEST(SseParser, RetryIsKept) {
  sse_parser p;
  std::vector<sse_event> out;
  p.feed("retry: 1500\n\n", out);
  EXPECT_EQ(p.retry_ms(), 1500);
  EXPECT_TRUE(out.empty());
}

TEST(SseParser, NotAnEventStreamIsAClearError) {
  const std::string html = error_of("<html><body>502 Bad Gateway</body></html>\n");
  EXPECT_NE(html.find("line 1"), std::string::npos) << html;
  EXPECT_NE(html.find("not an SSE field"), std::string::npos) << html;
  EXPECT_NE(html.find("<html><body>502"), std::string::npos) << html;
  const std::string json = error_of("data: {}\n\n{\"error\": \"x\"}\n");
  EXPECT_NE(json.find("line 3"), std::string::npos) << json;
}

TEST(SseParser, BinaryAndOverlongLinesAreErrors) {
  EXPECT_NE(error_of(std::string("data: a\0b\n\n", 11)).find("NUL"), std::string::npos);
  sse_parser p(sse_parser::limits{16, 64});
  std::vector<sse_event> out;
  EXPECT_THROW(p.feed("data: 0123456789abcdef\n", out), sse_error);
  sse_parser q(sse_parser::limits{16, 64});
  EXPECT_THROW(q.feed("data: 0123456789abcdef", out), sse_error);  // no line end yet, already too long
  sse_parser r(sse_parser::limits{64, 20});
  EXPECT_THROW(r.feed("data: 0123456789\ndata: 0123456789\n", out), sse_error);
}

TEST(SseParser, AStreamCutInsideAnEventIsAnError) {
  EXPECT_NE(error_of("data: {\"content\":\"a\"}\n").find("ended inside an event"), std::string::npos);
  EXPECT_NE(error_of("data: {\"content\":").find("middle of a line"), std::string::npos);
  EXPECT_EQ(error_of("data: x\n\n: trailing comment"), "");
}

TEST(SseParser, ErrorsShowControlBytesEscaped) {
  const std::string e = error_of("\x1b[31mred\n");
  EXPECT_NE(e.find("\\x1b[31mred"), std::string::npos) << e;
}
