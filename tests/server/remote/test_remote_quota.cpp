// Metering of remote calls, through the real router (make_router with the
// builtin kinds) and real remote sources, against recording servers on
// loopback (tests/recording_http_server.h): prompt tokens as the server
// reports them ("usage" of /v1/completions, "tokens_evaluated" of /infill),
// estimated from the prompt sent when it reports none; a cancelled call, and
// one that failed after its request went out, count what was sent (one
// refused with an error status counts nothing); such counts spend a quota, which passes the route to the next
// source. Also the remote source's own refusals: a key over plain http to
// another machine (the source is down, with the reason), an answer over the
// size cap, a redirect that would carry the code to another origin.
#include <gtest/gtest.h>

#include <boost/json.hpp>
#include <thread>

#include "server/completion/api/source_failure.h"
#include "server/routing/make_router.h"
#include "server/routing/routing_settings.h"
#include "tests/recording_http_server.h"
#include "tests/server/remote/remote_test_util.h"

namespace qf::server::routing {
namespace {

namespace json = boost::json;
using namespace std::chrono_literals;
using qf::test::canned_response;
using qf::test::recording_http_server;

const std::string doc_text = "import os\n\ndef area(r):\n    return 3.14159 * r * r\n\nvalue = ";
constexpr int64_t doc_line = 5, doc_col = 8;

std::string openai_events(bool with_usage) {
  std::string s = "data: {\"choices\":[{\"text\":\"42\",\"finish_reason\":null}]}\n\n"
                  "data: {\"choices\":[{\"text\":\"\",\"finish_reason\":\"stop\"}]}\n\n";
  if (with_usage)
    s += "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":1234,\"completion_tokens\":3,\"total_tokens\":1237}}\n\n";
  return s + "data: [DONE]\n\n";
}

canned_response sse(std::string body) {
  canned_response r;
  r.headers.push_back({"Content-Type", "text/event-stream"});
  r.body = std::move(body);
  return r;
}

struct routed {
  std::unique_ptr<completion_provider> router;
  std::shared_ptr<source_board> board = std::make_shared<source_board>();
  std::vector<std::string> notices;
};

routed make(const std::string& sources, const std::string& routes = "{}") {
  routed r;
  routing_settings s;
  s.sources_json = json::parse(sources);
  s.routes_json = json::parse(routes);
  std::string err;
  EXPECT_TRUE(parse_routing(s, builtin_kinds(), &err)) << err;
  router_inputs in;
  in.settings = s;
  in.board = r.board;
  in.notify = [&r](const std::string& m) { r.notices.push_back(m); };
  r.router = make_router(in, &err);
  EXPECT_TRUE(r.router) << err;
  return r;
}

json::object stats_of(source_board& b, const std::string& name) {
  const json::value all = b.stats_json();
  for (const auto& v : all.as_array())
    if (v.at("name").as_string() == name) return v.as_object();
  ADD_FAILURE() << "no stats for " << name;
  return {};
}

completion_result complete(completion_provider& p, std::chrono::milliseconds budget = 5s,
                           const cancel_token& cancel = {}) {
  return p.complete(qf::remote::testing::make_request(doc_text, doc_line, doc_col, budget), cancel);
}

// The estimate for a body the server received: the prompt text in it, about 3 bytes a token.
int64_t estimate_of(const std::string& body) {
  const json::object b = json::parse(body).as_object();
  std::size_t bytes = 0;
  for (const char* k : {"prompt", "suffix", "input_prefix", "input_suffix"})
    if (const auto* v = b.if_contains(k)) bytes += v->as_string().size();
  if (const auto* extra = b.if_contains("input_extra"))
    for (const auto& c : extra->as_array())
      bytes += c.at("filename").as_string().size() + c.at("text").as_string().size();
  return static_cast<int64_t>((bytes + 2) / 3);
}

TEST(RemoteQuota, PromptTokensAreCountedAsTheServerReportsThem) {
  recording_http_server server;
  ASSERT_TRUE(server.ok()) << server.error();
  server.answer("/v1/completions", sse(openai_events(true)));
  routed r = make(R"([{"name":"cloud","kind":"openai","endpoints":[")" + server.origin() + R"("]}])");
  ASSERT_TRUE(r.router);
  completion_result res = complete(*r.router);
  ASSERT_EQ(res.items.size(), 1u);
  EXPECT_EQ(res.items[0].insert_text, "42");
  const json::object st = stats_of(*r.board, "cloud");
  EXPECT_EQ(st.at("promptTokens").as_int64(), 1234);
  EXPECT_EQ(st.at("completionTokens").as_int64(), 3);
  EXPECT_EQ(st.at("quota").at("tokensLastHour").as_int64(), 1237);
  // The source asked for the usage.
  auto seen = server.requests();
  ASSERT_EQ(seen.size(), 1u);
  const json::object body = json::parse(seen[0].body).as_object();
  EXPECT_EQ(body.at("stream_options").at("include_usage").as_bool(), true);
}

TEST(RemoteQuota, InfillReportsTokensEvaluated) {
  recording_http_server server;
  ASSERT_TRUE(server.ok()) << server.error();
  server.answer("/infill", sse("data: {\"content\":\"42\",\"stop\":false}\n\n"
                               "data: {\"content\":\"\",\"stop\":true,\"tokens_evaluated\":777,\"tokens_predicted\":2}\n\n"));
  routed r = make(R"([{"name":"box","kind":"llama-infill","endpoints":[")" + server.origin() + R"("]}])");
  ASSERT_TRUE(r.router);
  EXPECT_EQ(complete(*r.router).items.size(), 1u);
  const json::object st = stats_of(*r.board, "box");
  EXPECT_EQ(st.at("promptTokens").as_int64(), 777);
  EXPECT_EQ(st.at("completionTokens").as_int64(), 2);
}

TEST(RemoteQuota, UnreportedPromptTokensAreEstimatedFromWhatWasSent) {
  recording_http_server server;
  ASSERT_TRUE(server.ok()) << server.error();
  server.answer("/v1/completions", sse(openai_events(false)));
  routed r = make(R"([{"name":"cloud","kind":"openai","endpoints":[")" + server.origin() + R"("]}])");
  ASSERT_TRUE(r.router);
  ASSERT_EQ(complete(*r.router).items.size(), 1u);
  auto seen = server.requests();
  ASSERT_EQ(seen.size(), 1u);
  const int64_t expected = estimate_of(seen[0].body);
  EXPECT_GT(expected, 10);  // the document's text went out
  const json::object st = stats_of(*r.board, "cloud");
  EXPECT_EQ(st.at("promptTokens").as_int64(), expected);
  EXPECT_EQ(st.at("completionTokens").as_int64(), 1);  // one piece of text arrived
}

TEST(RemoteQuota, ACancelledCallCountsWhatWasSent) {
  recording_http_server server;
  ASSERT_TRUE(server.ok()) << server.error();
  canned_response stalls = sse("data: {\"choices\":[{\"text\":\"first\"}]}\n\n");
  stalls.content_length = false;
  stalls.hold_open = true;  // then nothing more, until the client goes
  server.answer("/v1/completions", stalls);
  routed r = make(R"([{"name":"cloud","kind":"openai","endpoints":[")" + server.origin() + R"("]}])");
  ASSERT_TRUE(r.router);
  qf::cancel_source cs;
  std::thread canceller([&] {
    server.wait_for(1);
    std::this_thread::sleep_for(300ms);
    cs.cancel(qf::cancel_reason::content_modified);
  });
  completion_result res = complete(*r.router, 60s, cs.token());
  canceller.join();
  EXPECT_TRUE(res.items.empty());
  auto seen = server.requests();
  ASSERT_EQ(seen.size(), 1u);
  const json::object st = stats_of(*r.board, "cloud");
  EXPECT_EQ(st.at("requests").as_uint64(), 1u);
  EXPECT_EQ(st.at("cancelled").as_uint64(), 1u);
  EXPECT_EQ(st.at("errors").as_uint64(), 0u);
  EXPECT_EQ(st.at("promptTokens").as_int64(), estimate_of(seen[0].body));
  EXPECT_EQ(st.at("completionTokens").as_int64(), 1);
  EXPECT_EQ(st.at("quota").at("tokensLastHour").as_int64(), estimate_of(seen[0].body) + 1);
}

TEST(RemoteQuota, AFailureAfterTheRequestWentOutCountsWhatWasSent) {
  recording_http_server server;
  ASSERT_TRUE(server.ok()) << server.error();
  canned_response cut = sse("data: {\"choices\":[{\"text\":\"par\"}]}\n\n");
  cut.content_length = false;
  cut.headers.push_back({"Content-Length", "100000"});  // then the connection closes long before that
  server.answer("/v1/completions", cut);
  server.answer("/refused/v1/completions", {503, {}, "busy"});
  routed r = make(R"([{"name":"cloud","kind":"openai","retries":0,"endpoints":[")" + server.origin() + R"("]},)"
                  R"({"name":"busy","kind":"openai","retries":0,"endpoints":[")" + server.url("/refused") + R"("]}])",
                  R"({"automatic":["cloud","busy"],"explicit":["cloud","busy"]})");
  ASSERT_TRUE(r.router);
  EXPECT_THROW(complete(*r.router), source_failure);
  auto seen = server.requests();
  ASSERT_EQ(seen.size(), 2u);
  const json::object cloud = stats_of(*r.board, "cloud");
  EXPECT_EQ(cloud.at("errors").as_uint64(), 1u);
  EXPECT_EQ(cloud.at("promptTokens").as_int64(), estimate_of(seen[0].body));
  EXPECT_EQ(cloud.at("completionTokens").as_int64(), 1);
  // An endpoint that refused the request with an error status spent nothing.
  const json::object busy = stats_of(*r.board, "busy");
  EXPECT_EQ(busy.at("errors").as_uint64(), 1u);
  EXPECT_EQ(busy.at("promptTokens").as_int64(), 0);
}

TEST(RemoteQuota, CountedPromptTokensSpendTheQuotaAndTheRouteMovesOn) {
  recording_http_server cloud, box;
  ASSERT_TRUE(cloud.ok()) << cloud.error();
  ASSERT_TRUE(box.ok()) << box.error();
  cloud.answer("/v1/completions", sse(openai_events(true)));  // 1237 tokens a call
  box.answer("/infill", sse("data: {\"content\":\"7\",\"stop\":true}\n\n"));
  routed r = make(R"([{"name":"cloud","kind":"openai","endpoints":[")" + cloud.origin() +
                      R"("],"quota":{"tokensPerHour":1000}},{"name":"box","kind":"llama-infill","endpoints":[")" +
                      box.origin() + R"("]}])",
                  R"({"automatic":["cloud","box"],"explicit":["cloud","box"]})");
  ASSERT_TRUE(r.router);
  EXPECT_EQ(complete(*r.router).items.at(0).insert_text, "42");
  EXPECT_EQ(complete(*r.router).items.at(0).insert_text, "7");  // the quota is spent: the next source answers
  EXPECT_EQ(cloud.requests().size(), 1u);
  EXPECT_EQ(stats_of(*r.board, "cloud").at("skipped").at("quota").as_uint64(), 1u);
  ASSERT_EQ(r.notices.size(), 1u);
  EXPECT_NE(r.notices[0].find("1237 of 1000 tokens"), std::string::npos) << r.notices[0];
}

TEST(RemoteSourceRules, AKeyGoesOverPlainHttpOnlyToTheLoopback) {
  ::setenv("QF_TEST_REMOTE_KEY", "sk-test-secret", 1);
  std::string err;
  auto o = qf::remote::parse_remote_source(
      json::parse(R"({"kind":"openai","endpoints":["http://192.0.2.1:8000"],"apiKeyEnv":"QF_TEST_REMOTE_KEY"})")
          .as_object(),
      &err);
  ASSERT_TRUE(o) << err;
  EXPECT_EQ(qf::remote::make_remote_source(*o, &err), nullptr);
  EXPECT_NE(err.find("refusing to send the API key over plain http to 192.0.2.1:8000"), std::string::npos) << err;
  EXPECT_EQ(err.find("sk-test-secret"), std::string::npos) << err;
  // The loopback and https are fine.
  for (const char* ep : {"http://127.0.0.1:8000", "http://localhost:8000", "http://[::1]:8000", "https://192.0.2.1"}) {
    auto ok = qf::remote::parse_remote_source(
        json::parse(std::string(R"({"kind":"openai","apiKeyEnv":"QF_TEST_REMOTE_KEY","endpoints":[")") + ep + "\"]}")
            .as_object(),
        &err);
    ASSERT_TRUE(ok) << err;
    EXPECT_NE(qf::remote::make_remote_source(*ok, &err), nullptr) << ep << ": " << err;
  }
  ::unsetenv("QF_TEST_REMOTE_KEY");
}

TEST(RemoteSourceRules, ARedirectDoesNotCarryTheCodeToAnotherOrigin) {
  recording_http_server server, other("127.0.0.2");
  ASSERT_TRUE(server.ok()) << server.error();
  if (!other.ok()) GTEST_SKIP() << "cannot listen on 127.0.0.2: " << other.error();
  server.redirect("/v1/completions", 307, other.url("/v1/completions"));
  auto s = qf::remote::testing::make_source(R"({"kind":"openai","retries":0,"endpoints":[")" + server.origin() +
                                            R"("]})");
  ASSERT_TRUE(s);
  auto o = qf::remote::testing::run(*s, qf::remote::testing::make_request(doc_text, doc_line, doc_col, 5s));
  EXPECT_EQ(o.kind, "unavailable");
  EXPECT_NE(o.message.find("request body to another origin"), std::string::npos) << o.message;
  EXPECT_EQ(server.wait_for(1).size(), 1u);
  std::this_thread::sleep_for(200ms);
  EXPECT_TRUE(other.requests().empty());
}

TEST(RemoteSourceRules, AnAnswerOverTheCapFailsClearly) {
  recording_http_server server;
  ASSERT_TRUE(server.ok()) << server.error();
  std::string flood = "data: {\"choices\":[{\"text\":\"\"}]}\n\n";
  while (flood.size() < (9u << 20)) flood += ": keep-alive padding that never ends the answer\n";
  canned_response r = sse(flood);
  r.content_length = false;
  server.answer("/v1/completions", r);
  auto s = qf::remote::testing::make_source(R"({"kind":"openai","retries":0,"endpoints":[")" + server.origin() +
                                            R"("]})");
  ASSERT_TRUE(s);
  auto o = qf::remote::testing::run(*s, qf::remote::testing::make_request(doc_text, doc_line, doc_col, 20s));
  EXPECT_EQ(o.kind, "protocol") << o.message;
  EXPECT_NE(o.message.find("passed the limit of 8388608 bytes"), std::string::npos) << o.message;
}

}  // namespace
}  // namespace qf::server::routing
