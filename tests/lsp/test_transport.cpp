// Content-Length framing: partial reads, ignored headers, size limit, bad
// headers, end of input, and interruption of a blocked reader.
#include <gtest/gtest.h>
#include <unistd.h>

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
  read_result next = reader.read_message();
  ASSERT_EQ(next.what, read_result::kind::message);
  EXPECT_EQ(next.body, "{}");
  writer.join();
}

TEST(Transport, BadHeadersAreReportedAndReadingContinues) {
  pipe_pair p;
  p.write("Content-Type: text/plain\r\n\r\n");
  p.write("Content-Length: abc\r\n\r\n");
  p.write("garbage line\r\n\r\n");
  p.write(qf::lsp::frame_message("{\"ok\":true}"));
  p.close_write();
  fd_reader reader(p.r);
  read_result a = reader.read_message();
  EXPECT_EQ(a.what, read_result::kind::bad_header);
  EXPECT_NE(a.error.find("no Content-Length"), std::string::npos) << a.error;
  read_result b = reader.read_message();
  EXPECT_EQ(b.what, read_result::kind::bad_header);
  EXPECT_NE(b.error.find("abc"), std::string::npos) << b.error;
  read_result c = reader.read_message();
  EXPECT_EQ(c.what, read_result::kind::bad_header);
  read_result d = reader.read_message();
  ASSERT_EQ(d.what, read_result::kind::message);
  EXPECT_EQ(d.body, "{\"ok\":true}");
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
