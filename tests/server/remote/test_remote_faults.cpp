// The remote source against a real nginx on 127.0.0.1 playing a broken or
// slow inference server: HTTP 500s (retries, then failure, then an open
// breaker), malformed event streams, a stream slower than the deadline, a
// server killed mid-stream, refused connections and failover, and a
// cancellation that closes the stream.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <thread>

#include "tests/llama_server.h"
#include "tests/nginx_server.h"
#include "tests/server/remote/remote_test_util.h"

using namespace qf::remote;
using namespace qf::remote::testing;
using qf::test::nginx_server;

namespace {

const std::string doc_text = "import os\n\nvalue = ";
constexpr int64_t doc_line = 2, doc_col = 8;

std::string sse_ok(const std::string& text) {
  return "data: {\"choices\":[{\"text\":\"" + text + "\",\"finish_reason\":null}]}\n\n"
         "data: {\"choices\":[{\"text\":\"\",\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n";
}

// The first event at once, then comments trickling at 8 bytes/s for minutes.
std::string slow_stream() {
  std::string s = "data: {\"choices\":[{\"text\":\"first_piece\"}]}\n\n";
  for (int i = 0; i < 200; ++i) s += ": still thinking\n";
  return s;
}

std::string locations() {
  return "    location = /ok/v1/completions { default_type text/event-stream; return 200 " + nginx_quoted(sse_ok("42")) +
         "; }\n"
         "    location = /e500/v1/completions { return 500 " + nginx_quoted("{\"error\":{\"message\":\"boom\"}}") + "; }\n"
         "    location = /e503/v1/completions { return 503; }\n"
         "    location = /e400/v1/completions { return 400 " + nginx_quoted("{\"error\":{\"message\":\"bad request\"}}") + "; }\n"
         "    location = /html/v1/completions { default_type text/event-stream; return 200 " +
         nginx_quoted("<html><body>oops</body></html>\n") + "; }\n"
         "    location = /json/v1/completions { default_type text/event-stream; return 200 " +
         nginx_quoted("data: {not json\n\n") + "; }\n"
         "    location = /slow/v1/completions { default_type text/event-stream; limit_rate_after 400; limit_rate 8; "
         "return 200 " + nginx_quoted(slow_stream()) + "; }\n";
}

class RemoteFaults : public ::testing::Test {
 protected:
  void SetUp() override {
    if (nginx_server::binary().empty()) GTEST_SKIP() << "nginx is not installed";
    dir_ = (std::filesystem::temp_directory_path() /
            ("qf_remote_faults_" + std::to_string(::getpid()) + "_" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name()))
               .string();
    std::filesystem::remove_all(dir_);
    nginx_ = std::make_unique<nginx_server>(dir_, locations());
    ASSERT_TRUE(nginx_->ok()) << nginx_->error();
  }
  void TearDown() override {
    nginx_.reset();
    if (!dir_.empty()) std::filesystem::remove_all(dir_);
  }
  std::string base(const std::string& prefix) const { return nginx_->url("/" + prefix); }
  std::string source(const std::string& prefix, const std::string& more = "") const {
    return R"({"kind": "openai", "endpoints": [")" + base(prefix) + R"("], "retryBackoffMs": 5)" + more + "}";
  }
  // The requests nginx logged for `prefix`. nginx writes a request's line
  // after the response went out, so the count is read again (for up to 2 s)
  // until it reaches `expect`, then once more after 100 ms to see no more come.
  int requests_to(const std::string& prefix, int expect) const {
    const std::string line = "POST /" + prefix + "/v1/completions ";
    nginx_->logged(line, static_cast<size_t>(expect));
    std::this_thread::sleep_for(100ms);
    return static_cast<int>(nginx_->logged(line, 0).size());
  }
  std::string log_line(const std::string& prefix) const {
    for (const auto& l : nginx_->access_log())
      if (l.rfind("POST /" + prefix + "/v1/completions ", 0) == 0) return l;
    return "";
  }
  // Waits (up to 10 s) for nginx to log a finished request.
  std::string wait_log_line(const std::string& prefix) const {
    for (int i = 0; i < 500; ++i) {
      std::string l = log_line(prefix);
      if (!l.empty()) return l;
      std::this_thread::sleep_for(20ms);
    }
    return "";
  }

  std::string dir_;
  std::unique_ptr<nginx_server> nginx_;
};

}  // namespace

TEST_F(RemoteFaults, AHealthyStreamGivesACandidate) {
  auto s = make_source(source("ok"));
  auto o = run(*s, make_request(doc_text, doc_line, doc_col, 5s));
  ASSERT_EQ(o.kind, "") << o.message;
  ASSERT_EQ(o.result.items.size(), 1u);
  EXPECT_EQ(o.result.items[0].insert_text, "42");
  EXPECT_EQ(s->health().state, "ok");
}

TEST_F(RemoteFaults, Http500IsRetriedThenFailsThenTheBreakerOpens) {
  auto s = make_source(source("e500", R"(, "retries": 2, "breakerFailures": 2, "breakerCoolDownMs": 60000)"));
  auto first = run(*s, make_request(doc_text, doc_line, doc_col, 5s));
  EXPECT_EQ(first.kind, "unavailable");
  EXPECT_NE(first.message.find("HTTP 500"), std::string::npos) << first.message;
  EXPECT_NE(first.message.find("boom"), std::string::npos) << first.message;  // the server's own message
  EXPECT_EQ(requests_to("e500", 3), 3);  // one try and two retries
  EXPECT_EQ(s->attempts(), 3u);
  EXPECT_EQ(s->health().state, "down");
  auto second = run(*s, make_request(doc_text, doc_line, doc_col, 5s));
  EXPECT_EQ(second.kind, "unavailable");
  EXPECT_EQ(requests_to("e500", 6), 6);
  EXPECT_EQ(s->endpoint_state(0), circuit_breaker::state::open);
  auto third = run(*s, make_request(doc_text, doc_line, doc_col, 5s));
  EXPECT_EQ(third.kind, "circuit_open") << third.message;
  EXPECT_EQ(requests_to("e500", 6), 6);  // no request while the breaker is open
  EXPECT_EQ(s->health().state, "circuit_open");
}

TEST_F(RemoteFaults, Http503IsRetried) {
  auto s = make_source(source("e503", R"(, "retries": 1)"));
  EXPECT_EQ(run(*s, make_request(doc_text, doc_line, doc_col, 5s)).kind, "unavailable");
  EXPECT_EQ(requests_to("e503", 2), 2);
}

TEST_F(RemoteFaults, Http400IsRefusedWithoutRetryOrBreaker) {
  auto s = make_source(source("e400", R"(, "retries": 3, "breakerFailures": 1)"));
  auto o = run(*s, make_request(doc_text, doc_line, doc_col, 5s));
  EXPECT_EQ(o.kind, "refused");
  EXPECT_NE(o.message.find("bad request"), std::string::npos) << o.message;
  EXPECT_EQ(requests_to("e400", 1), 1);
  EXPECT_EQ(s->endpoint_state(0), circuit_breaker::state::closed);
}

TEST_F(RemoteFaults, MalformedStreamsAreClearProtocolFailures) {
  auto html = make_source(source("html", R"(, "retries": 3)"));
  auto o = run(*html, make_request(doc_text, doc_line, doc_col, 5s));
  EXPECT_EQ(o.kind, "protocol");
  EXPECT_NE(o.message.find("malformed event stream at line 1"), std::string::npos) << o.message;
  EXPECT_NE(o.message.find("<html><body>oops"), std::string::npos) << o.message;
  EXPECT_EQ(requests_to("html", 1), 1);  // data arrived: never retried
  auto json = make_source(source("json"));
  o = run(*json, make_request(doc_text, doc_line, doc_col, 5s));
  EXPECT_EQ(o.kind, "protocol");
  EXPECT_NE(o.message.find("not a JSON object"), std::string::npos) << o.message;
}

TEST_F(RemoteFaults, ASlowServerIsAnsweredByTheDeadlineAndTheStreamClosed) {
  auto s = make_source(source("slow"));
  const auto t0 = std::chrono::steady_clock::now();
  auto o = run(*s, make_request(doc_text, doc_line, doc_col, 700ms));
  const auto took = std::chrono::steady_clock::now() - t0;
  ASSERT_EQ(o.kind, "") << o.message;
  ASSERT_EQ(o.result.items.size(), 1u);
  EXPECT_EQ(o.result.items[0].insert_text, "first_piece");  // what arrived before the deadline
  EXPECT_TRUE(o.result.incomplete);
  EXPECT_LT(took, 60s);  // the whole stream would take minutes
  // nginx logs the request once it sees the connection closed: cut short.
  const std::string line = wait_log_line("slow");
  ASSERT_FALSE(line.empty()) << "nginx never finished the request: the stream was not closed";
  const auto bytes = std::stoul(line.substr(line.rfind(' ') + 1));
  EXPECT_LT(bytes, slow_stream().size()) << line;
}

TEST_F(RemoteFaults, NoTextByTheDeadlineIsATimeout) {
  auto s = make_source(source("slow", R"(, "readTimeoutMs": 50)"));
  auto o = run(*s, make_request(doc_text, doc_line, doc_col, 5s));
  // The first event arrives, then silence longer than readTimeoutMs: a timeout after data.
  EXPECT_EQ(o.kind, "timeout") << o.message;
}

TEST_F(RemoteFaults, AServerKilledMidStreamFailsCleanly) {
  auto s = make_source(source("slow", R"(, "retries": 3)"));
  std::thread killer([&] {
    std::this_thread::sleep_for(400ms);
    nginx_->kill_now();
  });
  auto o = run(*s, make_request(doc_text, doc_line, doc_col, 60s));
  killer.join();
  EXPECT_EQ(o.kind, "unavailable") << o.message;  // not a timeout at the 60 s deadline: no hang
  EXPECT_NE(o.message.find("after the answer began"), std::string::npos) << o.message;
  EXPECT_EQ(s->attempts(), 1u);  // data had arrived: not retried
}

TEST_F(RemoteFaults, CancellationClosesTheStream) {
  auto s = make_source(source("slow"));
  qf::cancel_source cs;
  std::thread canceller([&] {
    std::this_thread::sleep_for(400ms);
    cs.cancel(qf::cancel_reason::content_modified);
  });
  auto o = run(*s, make_request(doc_text, doc_line, doc_col, 60s), cs.token());
  canceller.join();
  EXPECT_EQ(o.kind, "") << o.message;  // cancelled work is not a failure of the source
  EXPECT_TRUE(o.result.items.empty());
  const std::string line = wait_log_line("slow");
  ASSERT_FALSE(line.empty()) << "nginx never finished the request: the stream was not closed";
  EXPECT_LT(std::stoul(line.substr(line.rfind(' ') + 1)), slow_stream().size()) << line;
  EXPECT_EQ(s->endpoint_state(0), circuit_breaker::state::closed);
}

TEST_F(RemoteFaults, RefusedConnectionsAreRetriedAndFailOverToTheNextEndpoint) {
  const std::string dead = "http://127.0.0.1:" + std::to_string(qf::test::llama_server::free_port());
  // A document whose own endpoint is the dead one.
  endpoint_ring ring({dead, base("ok")});
  std::string uri;
  for (int i = 0; uri.empty(); ++i) {
    const std::string u = "file:///work/app/m" + std::to_string(i) + ".py";
    if (ring.primary(u) == 0) uri = u;
  }
  auto s = make_source(R"({"kind": "openai", "retries": 2, "retryBackoffMs": 5, "breakerFailures": 1, "endpoints": [")" +
                       dead + R"(", ")" + base("ok") + R"("]})");
  auto o = run(*s, make_request(doc_text, doc_line, doc_col, 5s, false, uri));
  ASSERT_EQ(o.kind, "") << o.message;
  ASSERT_EQ(o.result.items.size(), 1u);
  EXPECT_EQ(o.result.items[0].insert_text, "42");
  EXPECT_EQ(s->attempts(), 4u);  // three to the dead endpoint, one to the live one
  EXPECT_EQ(s->endpoint_state(0), circuit_breaker::state::open);
  EXPECT_EQ(s->health().state, "degraded");
  // Next time the open breaker skips the dead endpoint without a connection.
  o = run(*s, make_request(doc_text, doc_line, doc_col, 5s, false, uri));
  ASSERT_EQ(o.kind, "") << o.message;
  EXPECT_EQ(s->attempts(), 5u);
}

TEST_F(RemoteFaults, OnlyADeadEndpointIsUnavailable) {
  const std::string dead = "http://127.0.0.1:" + std::to_string(qf::test::llama_server::free_port());
  auto s = make_source(R"({"kind": "llama-infill", "retries": 1, "retryBackoffMs": 5, "endpoints": [")" + dead + R"("]})");
  auto o = run(*s, make_request(doc_text, doc_line, doc_col, 5s));
  EXPECT_EQ(o.kind, "unavailable");
  EXPECT_NE(o.message.find("cannot connect"), std::string::npos) << o.message;
  EXPECT_EQ(s->attempts(), 2u);
}
