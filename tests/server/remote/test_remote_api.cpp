// Request bodies of the two protocols and the events of their streams.
#include <gtest/gtest.h>

#include <boost/json.hpp>

#include "server/completion/api/source_failure.h"
#include "server/remote/remote_api.h"

namespace json = boost::json;
using namespace qf::remote;
using qf::server::failure_kind;
using qf::server::source_failure;

namespace {
prompt_parts parts() {
  prompt_parts p;
  p.filename = "/w/a.py";
  p.prefix = "def add(a, b):\n    return ";
  p.suffix = "\n\nprint(add(1, 2))\n";
  p.extra = {{"/w/b.py", "def sub(a, b):\n    return a - b\n"}};
  return p;
}
json::object body_of(const api_request& r) { return json::parse(r.body).as_object(); }
}  // namespace

TEST(RemoteApi, OpenAiSendsPromptAndSuffix) {
  remote_options o;
  o.protocol = remote_protocol::openai;
  o.model = "m";
  o.max_tokens = 32;
  o.stop = {"\n\n"};
  const api_request r = make_api_request(o, parts(), -1, 128);  // the source's maxTokens wins
  EXPECT_EQ(r.path, "/v1/completions");
  const json::object b = body_of(r);
  EXPECT_EQ(b.at("model").as_string(), "m");
  EXPECT_EQ(b.at("prompt").as_string(), "def add(a, b):\n    return ");
  EXPECT_EQ(b.at("suffix").as_string(), "\n\nprint(add(1, 2))\n");
  EXPECT_EQ(b.at("max_tokens").as_int64(), 32);
  EXPECT_EQ(b.at("stream").as_bool(), true);
  EXPECT_EQ(b.at("stream_options").at("include_usage").as_bool(), true);  // the tokens, for the quota
  EXPECT_EQ(b.at("stop").as_array().size(), 1u);
  EXPECT_EQ(r.prompt_bytes, std::string("def add(a, b):\n    return \n\nprint(add(1, 2))\n").size());
  o.stream_usage = false;  // for a server that refuses the option
  EXPECT_FALSE(body_of(make_api_request(o, parts(), -1, 32)).contains("stream_options"));
}

TEST(RemoteApi, EventsCarryTheReportedTokens) {
  sse_event usage;
  usage.data = R"({"choices":[],"usage":{"prompt_tokens":120,"completion_tokens":7}})";
  stream_piece p = parse_event(remote_protocol::openai, usage);
  ASSERT_TRUE(p.prompt_tokens && p.completion_tokens);
  EXPECT_EQ(*p.prompt_tokens, 120);
  EXPECT_EQ(*p.completion_tokens, 7);
  sse_event no_usage;
  no_usage.data = R"({"choices":[{"text":"x"}],"usage":null})";
  EXPECT_FALSE(parse_event(remote_protocol::openai, no_usage).prompt_tokens);
  sse_event last;
  last.data = R"({"content":"","stop":true,"tokens_evaluated":300,"tokens_predicted":4})";
  p = parse_event(remote_protocol::llama_infill, last);
  EXPECT_EQ(p.prompt_tokens.value_or(-1), 300);
  EXPECT_EQ(p.completion_tokens.value_or(-1), 4);
  sse_event negative;
  negative.data = R"({"content":"a","stop":false,"tokens_evaluated":-5})";
  EXPECT_FALSE(parse_event(remote_protocol::llama_infill, negative).prompt_tokens);
}

TEST(RemoteApi, OpenAiWithATemplateFormatsTheFimPrompt) {
  remote_options o;
  o.protocol = remote_protocol::openai;
  o.fim_template = "<fim_prefix>{prefix}<fim_suffix>{suffix}<fim_middle>";
  const json::object b = body_of(make_api_request(o, parts(), -1, 32));
  EXPECT_EQ(b.at("prompt").as_string(),
            "<fim_prefix>def add(a, b):\n    return <fim_suffix>\n\nprint(add(1, 2))\n<fim_middle>");
  EXPECT_FALSE(b.contains("suffix"));
  EXPECT_FALSE(b.contains("model"));
}

TEST(RemoteApi, InfillSendsPrefixSuffixExtraAndCachePrompt) {
  remote_options o;
  o.protocol = remote_protocol::llama_infill;
  const api_request r = make_api_request(o, parts(), 3, 48);  // no maxTokens of its own: the request's limit
  EXPECT_EQ(r.path, "/infill");
  const json::object b = body_of(r);
  EXPECT_EQ(b.at("input_prefix").as_string(), "def add(a, b):\n    return ");
  EXPECT_EQ(b.at("input_suffix").as_string(), "\n\nprint(add(1, 2))\n");
  ASSERT_EQ(b.at("input_extra").as_array().size(), 1u);
  EXPECT_EQ(b.at("input_extra").as_array()[0].as_object().at("filename").as_string(), "/w/b.py");
  EXPECT_EQ(b.at("cache_prompt").as_bool(), true);
  EXPECT_EQ(b.at("id_slot").as_int64(), 3);
  EXPECT_EQ(b.at("n_predict").as_int64(), 48);
  EXPECT_FALSE(body_of(make_api_request(o, parts(), -1, 48)).contains("id_slot"));
}

TEST(RemoteApi, OpenAiEvents) {
  auto p = parse_event(remote_protocol::openai, {"message", R"({"choices":[{"text":"a + b","finish_reason":null}]})", ""});
  EXPECT_EQ(p.text, "a + b");
  EXPECT_FALSE(p.done);
  p = parse_event(remote_protocol::openai, {"message", R"({"choices":[{"text":"","finish_reason":"stop"}]})", ""});
  EXPECT_EQ(p.finish_reason, "stop");
  EXPECT_TRUE(parse_event(remote_protocol::openai, {"message", "[DONE]", ""}).done);
}

TEST(RemoteApi, InfillEvents) {
  auto p = parse_event(remote_protocol::llama_infill, {"message", R"({"content":"x","stop":false})", ""});
  EXPECT_EQ(p.text, "x");
  EXPECT_FALSE(p.done);
  EXPECT_TRUE(parse_event(remote_protocol::llama_infill, {"message", R"({"content":"","stop":true})", ""}).done);
}

TEST(RemoteApi, BadEventsAreProtocolFailuresAndErrorEventsUnavailable) {
  auto kind_of = [](remote_protocol pr, const std::string& data) {
    try {
      parse_event(pr, {"message", data, ""});
    } catch (const source_failure& f) {
      return std::string(qf::server::failure_kind_name(f.kind())) + ": " + f.what();
    }
    return std::string("no failure");
  };
  EXPECT_EQ(kind_of(remote_protocol::openai, "not json").rfind("protocol", 0), 0u);
  EXPECT_EQ(kind_of(remote_protocol::openai, R"({"text":"no choices"})").rfind("protocol", 0), 0u);
  EXPECT_EQ(kind_of(remote_protocol::llama_infill, R"({"tokens":[1]})").rfind("protocol", 0), 0u);
  const std::string e = kind_of(remote_protocol::llama_infill, R"({"error":{"code":500,"message":"slot crashed"}})");
  EXPECT_EQ(e.rfind("unavailable", 0), 0u) << e;
  EXPECT_NE(e.find("slot crashed"), std::string::npos);
}

TEST(RemoteApi, ErrorBodies) {
  EXPECT_EQ(error_body_message(R"({"error":{"message":"Invalid API Key","type":"authentication_error"}})"),
            "Invalid API Key");
  EXPECT_EQ(error_body_message(R"({"error":"overloaded"})"), "overloaded");
  EXPECT_EQ(error_body_message("<html>"), "");
}
