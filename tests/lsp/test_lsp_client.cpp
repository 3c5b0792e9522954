// The child-process LSP client (lsp/client/lsp_client.h) against /bin/cat,
// which sends every frame back: framing both ways, arrival order, waiting for
// one response while others stay queued, answering server requests, malformed
// output, timeouts, exit codes and a program that cannot be started.
#include <gtest/gtest.h>

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <sstream>

#include <boost/json.hpp>

#include "lsp/client/lsp_client.h"
#include "lsp/transport.h"

namespace json = boost::json;
using qf::lsp::client_options;
using qf::lsp::lsp_client;
using std::chrono::milliseconds;

namespace {

constexpr milliseconds hang_guard(10000);

void start_cat(lsp_client& c, const client_options& opts = {}) {
  std::string error;
  ASSERT_TRUE(c.start({"/bin/cat"}, opts, &error)) << error;
}

json::value response(std::int64_t id) { return json::object{{"jsonrpc", "2.0"}, {"id", id}, {"result", id * 10}}; }

}  // namespace

TEST(LspClient, RequestsAndNotificationsAreFramedAndComeBackInOrder) {
  lsp_client c;
  start_cat(c);
  const std::int64_t first = c.request("ping", json::object{{"x", 1}});
  const std::int64_t second = c.request("ping", nullptr);
  EXPECT_EQ(first, 1);
  EXPECT_EQ(second, 2);
  ASSERT_TRUE(c.notify("note", json::array{"a"}));
  auto m1 = c.next(hang_guard), m2 = c.next(hang_guard), m3 = c.next(hang_guard);
  ASSERT_TRUE(m1 && m2 && m3);
  EXPECT_EQ(m1->body, json::parse(R"({"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":1}})"));
  EXPECT_EQ(m2->body, json::parse(R"({"jsonrpc":"2.0","id":2,"method":"ping","params":null})"));
  EXPECT_EQ(m3->body, json::parse(R"({"jsonrpc":"2.0","method":"note","params":["a"]})"));
  EXPECT_LE(m1->at, m2->at);
  EXPECT_TRUE(c.bad_output().empty());
}

TEST(LspClient, WaitResponseTakesOnlyThatResponse) {
  lsp_client c;
  start_cat(c);
  ASSERT_TRUE(c.notify("before", nullptr));
  ASSERT_TRUE(c.send(response(7)));
  ASSERT_TRUE(c.send(response(8)));
  auto r8 = c.wait_response(8, hang_guard);
  ASSERT_TRUE(r8);
  EXPECT_EQ(r8->body.at("result"), 80);
  // Everything cat sent before 8 is queued by now, in order.
  EXPECT_TRUE(c.has_response(7));
  EXPECT_FALSE(c.has_response(8));
  auto n = c.next(milliseconds(0));
  ASSERT_TRUE(n);
  EXPECT_EQ(n->body.at("method"), "before");
  auto r7 = c.next(milliseconds(0));
  ASSERT_TRUE(r7);
  EXPECT_EQ(r7->body.at("id"), 7);
  EXPECT_FALSE(c.has_response(7));
  EXPECT_FALSE(c.next(milliseconds(0)));
}

TEST(LspClient, WaitsEndAfterTheirTimeout) {
  lsp_client c;
  start_cat(c);
  EXPECT_FALSE(c.next(milliseconds(20)));
  EXPECT_FALSE(c.wait_response(99, milliseconds(20)));
  EXPECT_FALSE(c.output_closed());
}

TEST(LspClient, AnswersServerRequestsWhenAsked) {
  client_options opts;
  opts.answer_server_requests = true;
  lsp_client c;
  start_cat(c, opts);
  // cat returns our request as if the server had sent it; the client answers
  // it with null, and cat returns that answer as the response to our request.
  const std::int64_t id = c.request("window/workDoneProgress/create", json::object{{"token", "t"}});
  auto r = c.wait_response(id, hang_guard);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->body, json::parse(R"({"jsonrpc":"2.0","id":1,"result":null})"));
  // The request itself came before its answer and was not queued.
  EXPECT_FALSE(c.next(milliseconds(0)));
}

TEST(LspClient, MalformedOutputIsReportedAndReadingGoesOn) {
  lsp_client c;
  start_cat(c);
  ASSERT_TRUE(c.send_raw(qf::lsp::frame_message("not json")));
  ASSERT_TRUE(c.send(response(3)));
  auto r = c.wait_response(3, hang_guard);
  ASSERT_TRUE(r);
  const std::vector<std::string> bad = c.bad_output();
  ASSERT_EQ(bad.size(), 1u);
  EXPECT_EQ(bad[0], "unparsable message: not json");
  EXPECT_FALSE(c.next(milliseconds(0)));
}

TEST(LspClient, ClosingInputEndsTheServerAndItsOutput) {
  lsp_client c;
  start_cat(c);
  ASSERT_TRUE(c.send(response(1)));
  c.close_stdin();
  EXPECT_FALSE(c.send(response(2)));
  bool timed_out = true;
  EXPECT_EQ(c.wait_exit(hang_guard, &timed_out), 0);
  EXPECT_FALSE(timed_out);
  // What was sent before the end still arrives; then the output is closed.
  EXPECT_TRUE(c.wait_response(1, hang_guard));
  EXPECT_FALSE(c.next(hang_guard));
  EXPECT_TRUE(c.output_closed());
}

TEST(LspClient, KilledServerReportsTheSignal) {
  lsp_client c;
  std::string error;
  ASSERT_TRUE(c.start({"/bin/sleep", "60"}, {}, &error)) << error;
  c.kill_child();
  bool timed_out = true;
  EXPECT_EQ(c.wait_exit(hang_guard, &timed_out), -9);
  EXPECT_FALSE(timed_out);
}

TEST(LspClient, ProgramThatCannotStartExitsWith127AndSaysWhy) {
  char dir[] = "/tmp/qf_lsp_client_XXXXXX";
  ASSERT_NE(::mkdtemp(dir), nullptr);
  const std::string err_path = std::string(dir) + "/stderr.txt";
  {
    lsp_client c;
    client_options opts;
    opts.stderr_path = err_path;
    std::string error;
    ASSERT_TRUE(c.start({"/nonexistent/quickfill"}, opts, &error)) << error;
    bool timed_out = true;
    EXPECT_EQ(c.wait_exit(hang_guard, &timed_out), 127);
    EXPECT_FALSE(c.next(hang_guard));
  }
  std::ifstream in(err_path);
  std::stringstream ss;
  ss << in.rdbuf();
  EXPECT_NE(ss.str().find("exec /nonexistent/quickfill"), std::string::npos) << ss.str();
  std::remove(err_path.c_str());
  ::rmdir(dir);
}

TEST(LspClient, StartRefusesWhatItCannotRun) {
  lsp_client c;
  std::string error;
  EXPECT_FALSE(c.start({}, {}, &error));
  EXPECT_FALSE(error.empty());
  client_options opts;
  opts.stderr_path = "/nonexistent/dir/stderr.txt";
  error.clear();
  EXPECT_FALSE(c.start({"/bin/cat"}, opts, &error));
  EXPECT_NE(error.find("/nonexistent/dir/stderr.txt"), std::string::npos) << error;
}
