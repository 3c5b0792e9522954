// Content-Length framing: partial reads, ignored headers, size limit, bad
// headers, end of input, and interruption of a blocked reader.
#include <gtest/gtest.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <thread>

#include "lsp/transport.h"

using qf::lsp::fd_reader;
using qf::lsp::fd_writer;
using qf::lsp::read_result;

namespace {

struct pipe_pair {
  int r = -1, w = -1;
  pipe_pair() {
    int fds[2];
    EXPECT_EQ(::pipe(fds), 0);
    r = fds[0];
    w = fds[1];
  }
  ~pipe_pair() {
    if (r >= 0) ::close(r);
    close_write();
  }
  void close_write() {
    if (w >= 0) ::close(w);
    w = -1;
  }
  void write(const std::string& s) { ASSERT_EQ(::write(w, s.data(), s.size()), static_cast<ssize_t>(s.size())); }
};

}  // namespace

TEST(Transport, ReadsMessagesDeliveredOneByteAtATime) {
  pipe_pair p;
  const std::string stream = "Content-Length: 7\r\nContent-Type: application/vscode-jsonrpc; charset=utf-8\r\n\r\n{\"a\":1}"
                             "content-length:   2\r\n\r\n[]";
  std::thread writer([&] {
    for (char c : stream) {
      ASSERT_EQ(::write(p.w, &c, 1), 1);
    }
    p.close_write();
  });
  fd_reader reader(p.r);
  read_result a = reader.read_message();
  ASSERT_EQ(a.what, read_result::kind::message) << a.error;
  EXPECT_EQ(a.body, "{\"a\":1}");
  read_result b = reader.read_message();
  ASSERT_EQ(b.what, read_result::kind::message) << b.error;
  EXPECT_EQ(b.body, "[]");
  writer.join();
  read_result c = reader.read_message();
  EXPECT_EQ(c.what, read_result::kind::eof);
  EXPECT_TRUE(c.error.empty());
}

TEST(Transport, OversizedMessageIsSkippedAndStreamStaysInSync) {
  pipe_pair p;
  std::thread writer([&] {
    p.write("Content-Length: 5000\r\n\r\n" + std::string(5000, 'x'));
    p.write(qf::lsp::frame_message("{}"));
    p.close_write();
  });
  fd_reader reader(p.r, 4096);
  read_result big = reader.read_message();
  EXPECT_EQ(big.what, read_result::kind::too_large);
  EXPECT_NE(big.error.find("5000"), std::string::npos) << big.error;
  EXPECT_NE(big.error.find("4096"), std::string::npos) << big.error;
  // The refused body is dropped up to the next header, and said so once.
  read_result gap = reader.read_message();
  ASSERT_EQ(gap.what, read_result::kind::skipped) << gap.error;
  EXPECT_EQ(gap.dropped_bytes, 5000u);
  EXPECT_EQ(gap.dropped, std::string(qf::lsp::dropped_prefix_bytes, 'x'));
  read_result next = reader.read_message();
  ASSERT_EQ(next.what, read_result::kind::message);
  EXPECT_EQ(next.body, "{}");
  writer.join();
}

TEST(Transport, HugeDeclaredLengthIsRefusedAtOnceWithoutWaitingForTheBody) {
  pipe_pair p;
  // Only the header is written (the writer end stays open): the reader must
  // answer without reading or allocating the declared length.
  p.write("Content-Length: 18446744073709551615\r\n\r\n");
  fd_reader reader(p.r);
  read_result big = reader.read_message();
  ASSERT_EQ(big.what, read_result::kind::too_large) << big.error;
  EXPECT_EQ(big.declared_length, 18446744073709551615ull);
  EXPECT_NE(big.error.find("18446744073709551615"), std::string::npos) << big.error;
  p.write(qf::lsp::frame_message("{\"after\":1}"));
  read_result next = reader.read_message();
  ASSERT_EQ(next.what, read_result::kind::message) << next.error;
  EXPECT_EQ(next.body, "{\"after\":1}");
}

TEST(Transport, LengthThatOverflowsIsABadHeader) {
  pipe_pair p;
  p.write("Content-Length: 99999999999999999999999999\r\n\r\n{}");
  p.write(qf::lsp::frame_message("[1]"));
  p.close_write();
  fd_reader reader(p.r);
  EXPECT_EQ(reader.read_message().what, read_result::kind::bad_header);
  read_result gap = reader.read_message();
  EXPECT_EQ(gap.what, read_result::kind::skipped);
  EXPECT_EQ(gap.dropped, "{}");
  read_result next = reader.read_message();
  ASSERT_EQ(next.what, read_result::kind::message) << next.error;
  EXPECT_EQ(next.body, "[1]");
}

TEST(Transport, BadHeaderFollowedByABodyResynchronizesOnTheNextHeader) {
  pipe_pair p;
  p.write("Content-Length: abc\r\n\r\n{}");
  p.write(qf::lsp::frame_message("{\"id\":2}"));
  p.write(qf::lsp::frame_message("{\"id\":3}"));
  p.close_write();
  fd_reader reader(p.r);
  read_result bad = reader.read_message();
  EXPECT_EQ(bad.what, read_result::kind::bad_header);
  EXPECT_NE(bad.error.find("'abc'"), std::string::npos) << bad.error;
  read_result gap = reader.read_message();
  ASSERT_EQ(gap.what, read_result::kind::skipped);
  EXPECT_EQ(gap.dropped, "{}");  // the bad block itself was reported, not dropped
  EXPECT_EQ(gap.dropped_bytes, 2u);
  read_result a = reader.read_message();
  ASSERT_EQ(a.what, read_result::kind::message) << a.error;
  EXPECT_EQ(a.body, "{\"id\":2}");
  read_result b = reader.read_message();
  ASSERT_EQ(b.what, read_result::kind::message) << b.error;
  EXPECT_EQ(b.body, "{\"id\":3}");
  EXPECT_EQ(reader.read_message().what, read_result::kind::eof);
}

TEST(Transport, BadHeadersAreReportedAndReadingContinues) {
  pipe_pair p;
  p.write("Content-Type: text/plain\r\n\r\n");
  p.write("Content-Length: 2\r\nno colon\r\n\r\n{}");
  p.write("garbage line\r\n\r\n");
  p.write(qf::lsp::frame_message("{\"ok\":true}"));
  p.close_write();
  fd_reader reader(p.r);
  read_result a = reader.read_message();
  EXPECT_EQ(a.what, read_result::kind::bad_header);
  EXPECT_NE(a.error.find("no Content-Length"), std::string::npos) << a.error;
  read_result b = reader.read_message();
  EXPECT_EQ(b.what, read_result::kind::bad_header);
  EXPECT_NE(b.error.find("malformed header line 'no colon'"), std::string::npos) << b.error;
  read_result c = reader.read_message();
  ASSERT_EQ(c.what, read_result::kind::skipped);
  EXPECT_EQ(c.dropped, "{}garbage line\r\n\r\n");
  read_result d = reader.read_message();
  ASSERT_EQ(d.what, read_result::kind::message);
  EXPECT_EQ(d.body, "{\"ok\":true}");
}

TEST(Transport, ErrorMessagesQuoteRawBytesAsPrintableAscii) {
  pipe_pair p;
  p.write("Content-Length: \xff\xfe\r\n\r\n");
  p.close_write();
  fd_reader reader(p.r);
  read_result r = reader.read_message();
  ASSERT_EQ(r.what, read_result::kind::bad_header);
  EXPECT_NE(r.error.find("'\\xff\\xfe'"), std::string::npos) << r.error;
}

TEST(Transport, GarbageBeforeAHeaderInTheSameBlockIsDroppedAndTheFrameKept) {
  // What a declared length that was too short leaves behind: the rest of the
  // body runs into the next header.
  pipe_pair p;
  p.write("Content-Length: 3\r\n\r\n{\"a\":1}");
  p.write(qf::lsp::frame_message("{\"b\":2}"));
  p.close_write();
  fd_reader reader(p.r);
  read_result cut = reader.read_message();
  ASSERT_EQ(cut.what, read_result::kind::message);
  EXPECT_EQ(cut.body, "{\"a");
  EXPECT_EQ(reader.read_message().what, read_result::kind::bad_header);
  read_result next = reader.read_message();
  ASSERT_EQ(next.what, read_result::kind::message) << next.error;
  EXPECT_EQ(next.body, "{\"b\":2}");
}

TEST(Transport, BodyThatSwallowedTheNextHeaderIsDroppedWithoutWaitingForItsLength) {
  pipe_pair p;
  // The first frame claims 500 bytes but is 7 long; the next frame follows at
  // once. The reader must not wait for the missing bytes.
  p.write("Content-Length: 500\r\n\r\n{\"a\":1}");
  p.write(qf::lsp::frame_message("{\"b\":2}"));
  fd_reader reader(p.r);
  read_result bad = reader.read_message();
  ASSERT_EQ(bad.what, read_result::kind::bad_body) << bad.error;
  EXPECT_EQ(bad.dropped, "{\"a\":1}");
  EXPECT_EQ(bad.dropped_bytes, 7u);
  read_result next = reader.read_message();
  ASSERT_EQ(next.what, read_result::kind::message) << next.error;
  EXPECT_EQ(next.body, "{\"b\":2}");
}

TEST(Transport, FindLengthHeader) {
  using qf::lsp::find_length_header;
  auto at = [](std::string_view s) { return find_length_header(s); };
  EXPECT_TRUE(at("xxcontent-LENGTH:  12 \r\n").complete);
  EXPECT_EQ(at("xxcontent-LENGTH:  12 \r\n").pos, 2u);
  EXPECT_TRUE(at("Content-Length:5\n").complete);
  // Not a header line: escaped line breaks (as inside a JSON string), no digits.
  EXPECT_FALSE(at("\"Content-Length: 12\\r\\n\"").complete);
  EXPECT_EQ(at("\"Content-Length: 12\\r\\n\"").pos, 24u);
  EXPECT_FALSE(at("Content-Length: abc\r\n").complete);
  // Cut off: it may still become one.
  EXPECT_EQ(at("{}Content-Len").pos, 2u);
  EXPECT_EQ(at("{}Content-Length: 12").pos, 2u);
  EXPECT_EQ(at("{}Content-Length: 12\r").pos, 2u);
  EXPECT_FALSE(at("{}Content-Length: 12\r").complete);
  EXPECT_EQ(at("{}").pos, 2u);
  // While resynchronizing any short value counts (it is then reported in turn).
  EXPECT_TRUE(find_length_header("Content-Length: twelve\r\n", 0, false).complete);
  EXPECT_FALSE(find_length_header("Content-Length: " + std::string(300, 'x') + "\n", 0, false).complete);
}

TEST(Transport, EndOfInputInsideBodyIsEofWithReason) {
  pipe_pair p;
  p.write("Content-Length: 10\r\n\r\n{\"a\"");
  p.close_write();
  fd_reader reader(p.r);
  read_result r = reader.read_message();
  EXPECT_EQ(r.what, read_result::kind::eof);
  EXPECT_NE(r.error.find("inside a message body"), std::string::npos) << r.error;
}

TEST(Transport, InterruptWakesABlockedReader) {
  pipe_pair p;
  fd_reader reader(p.r);
  std::thread t([&] { reader.interrupt(); });
  read_result r = reader.read_message();
  EXPECT_EQ(r.what, read_result::kind::interrupted);
  t.join();
}

TEST(Transport, WriterFramesMessages) {
  pipe_pair p;
  fd_writer w(p.w);
  ASSERT_TRUE(w.write_message("{\"x\":\"\xC3\xA9\"}"));
  p.close_write();
  char buf[128];
  ssize_t n = ::read(p.r, buf, sizeof buf);
  EXPECT_EQ(std::string(buf, static_cast<std::size_t>(n)), "Content-Length: 10\r\n\r\n{\"x\":\"\xC3\xA9\"}");
}

// A peer that takes nothing: the writer sleeps in poll() for room instead of
// retrying EAGAIN (which spun a core in each daemon session with such a
// client), and gives up after its timeout.
TEST(Transport, WriterToAPeerThatDoesNotReadWaitsWithoutSpinningAndTimesOut) {
  int sv[2];
  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
  ASSERT_EQ(::fcntl(sv[0], F_SETFL, ::fcntl(sv[0], F_GETFL) | O_NONBLOCK), 0);  // as after Asio's release()
  fd_writer w(sv[0], 1500);
  const std::string body(64 * 1024, 'x');
  rusage before{}, after{};
  ::getrusage(RUSAGE_THREAD, &before);
  const auto start = std::chrono::steady_clock::now();
  int written = 0;
  while (w.write_message(body)) ++written;  // fills the socket's buffers, then waits
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ::getrusage(RUSAGE_THREAD, &after);
  auto seconds = [](const timeval& t) { return static_cast<double>(t.tv_sec) + t.tv_usec / 1e6; };
  const double cpu = seconds(after.ru_utime) - seconds(before.ru_utime) + seconds(after.ru_stime) -
                     seconds(before.ru_stime);
  EXPECT_TRUE(w.timed_out());
  EXPECT_GE(wall, 1.4);   // it waited for the timeout...
  EXPECT_LT(cpu, 0.2 * wall) << "cpu " << cpu << " s of " << wall << " s";  // ...asleep
  EXPECT_FALSE(w.write_message("{}"));  // and stays failed
  // A reader that takes the bytes lets a writer without timeout finish.
  fd_writer patient(sv[0]);
  std::thread drain([&] {
    char buf[65536];
    while (::read(sv[1], buf, sizeof buf) > 0) {
    }
  });
  EXPECT_TRUE(patient.write_message(body));
  ::shutdown(sv[0], SHUT_WR);  // the drain sees the end
  drain.join();
  ::close(sv[0]);
  ::close(sv[1]);
  EXPECT_GT(written, 0);
}
