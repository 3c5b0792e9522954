// A remote source's token limit, seen in what reaches a real HTTP server on
// loopback (tests/recording_http_server.h): without a maxTokens of its own the
// source asks for the limit the local pipeline would use (completion.maxTokens
// for automatic triggers, completion.maxTokensExplicit for explicit
// invocations, an HTTP client's n_predict within the latter); with one, that.
#include <gtest/gtest.h>

#include <boost/json.hpp>

#include "tests/recording_http_server.h"
#include "tests/server/remote/remote_test_util.h"

using namespace qf::remote;
using namespace qf::remote::testing;
using qf::test::canned_response;
using qf::test::recording_http_server;
namespace json = boost::json;

namespace {

canned_response infill_answer() {
  canned_response r;
  r.headers.push_back({"Content-Type", "text/event-stream"});
  r.body = "data: {\"content\":\"42\",\"stop\":false}\n\n"
           "data: {\"content\":\"\",\"stop\":true,\"tokens_evaluated\":7,\"tokens_predicted\":1}\n\n";
  return r;
}

// n_predict of the request the source sent for `req`.
std::int64_t asked(recording_http_server& server, remote_source& s, const qf::server::completion_request& req) {
  const std::size_t before = server.requests().size();
  const outcome o = run(s, req);
  EXPECT_EQ(o.kind, "") << o.message;
  auto seen = server.requests();
  if (seen.size() != before + 1) {
    ADD_FAILURE() << "no request reached the server";
    return -1;
  }
  return json::parse(seen.back().body).as_object().at("n_predict").as_int64();
}

}  // namespace

TEST(RemoteTokenLimit, WithoutItsOwnLimitASourceAsksForTheRequestsLimit) {
  recording_http_server server;
  ASSERT_TRUE(server.ok()) << server.error();
  server.answer("/infill", infill_answer());
  auto s = make_source(R"({"kind": "llama-infill", "endpoints": [")" + server.origin() + R"("]})");
  ASSERT_TRUE(s);
  qf::server::completion::completion_settings settings;
  settings.max_tokens_auto = 20;
  settings.max_tokens_explicit = 90;
  s->configure(settings);
  const std::string text = "import os\n\nvalue = ";
  EXPECT_EQ(asked(server, *s, make_request(text, 2, 8, std::chrono::seconds(10))), 20);
  EXPECT_EQ(asked(server, *s, make_request(text, 2, 8, std::chrono::seconds(10), /*explicit_trigger=*/true)), 90);
  auto http = make_request(text, 2, 8, std::chrono::seconds(10));
  http.max_tokens = 40;  // an HTTP client's n_predict
  EXPECT_EQ(asked(server, *s, http), 40);
  http.max_tokens = 400;  // within the explicit limit
  EXPECT_EQ(asked(server, *s, http), 90);
}

TEST(RemoteTokenLimit, ASourcesOwnLimitIsWhatItAsksFor) {
  recording_http_server server;
  ASSERT_TRUE(server.ok()) << server.error();
  server.answer("/infill", infill_answer());
  auto s = make_source(R"({"kind": "llama-infill", "maxTokens": 48, "endpoints": [")" + server.origin() + R"("]})");
  ASSERT_TRUE(s);
  s->configure(qf::server::completion::completion_settings{});
  const std::string text = "import os\n\nvalue = ";
  EXPECT_EQ(asked(server, *s, make_request(text, 2, 8, std::chrono::seconds(10))), 48);
  EXPECT_EQ(asked(server, *s, make_request(text, 2, 8, std::chrono::seconds(10), /*explicit_trigger=*/true)), 48);
}
