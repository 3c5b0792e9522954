// JSON-RPC classification, reply-once, dispatch, and InvalidParams messages
// that name the JSON path.
#include <gtest/gtest.h>

#include <limits>
#include <vector>

#include "lsp/jsonrpc.h"
#include "lsp/protocol_quickfill.h"

using namespace qf::lsp;

namespace {

struct capture {
  std::vector<json::value> sent;
  std::shared_ptr<outbox> out = std::make_shared<outbox>([this](const std::string& s) { sent.push_back(json::parse(s)); });
};

}  // namespace

TEST(Classify, KindsAndInvalidMessages) {
  EXPECT_EQ(classify(R"({"jsonrpc":"2.0","id":1,"method":"m","params":{}})").what, incoming::kind::request);
  EXPECT_EQ(classify(R"({"jsonrpc":"2.0","method":"n"})").what, incoming::kind::notification);
  EXPECT_EQ(classify(R"({"jsonrpc":"2.0","id":"x","result":null})").what, incoming::kind::response);
  incoming bad = classify("{not json");
  EXPECT_EQ(bad.what, incoming::kind::invalid);
  EXPECT_EQ(bad.invalid_code, error_code::parse_error);
  incoming nover = classify(R"({"id":3,"method":"m"})");
  EXPECT_EQ(nover.invalid_code, error_code::invalid_request);
  EXPECT_EQ(nover.id, json::value(3));
  EXPECT_EQ(classify(R"({"jsonrpc":"2.0","id":4,"method":5})").invalid_reason, "method: expected string, got integer");
  EXPECT_EQ(classify("[1,2]").what, incoming::kind::invalid);
  EXPECT_EQ(classify(R"({"jsonrpc":"2.0","id":[1],"method":"m"})").what, incoming::kind::invalid);
}

TEST(ReplyOnce, SecondReplyIsDroppedAndMissingReplyBecomesInternalError) {
  capture c;
  {
    reply_once r(json::value(7), "m", c.out);
    r.error(error_code::content_modified, "stale");
    r.result(json::value(1));  // a late worker result
    EXPECT_TRUE(r.replied());
  }
  ASSERT_EQ(c.sent.size(), 1u);
  EXPECT_EQ(c.sent[0].at("error").at("code"), json::value(-32801));
  {
    reply_once forgotten(json::value("k"), "m", c.out);
    reply_once copy = forgotten;
  }
  ASSERT_EQ(c.sent.size(), 2u);
  EXPECT_EQ(c.sent[1].at("id"), json::value("k"));
  EXPECT_EQ(c.sent[1].at("error").at("code"), json::value(-32603));
}

TEST(Dispatcher, TypedParamsErrorsNameThePath) {
  capture c;
  dispatcher d(c.out);
  int calls = 0;
  d.on_request<completion_params>("textDocument/completion", [&](const completion_params& p, const reply_once& r) {
    ++calls;
    r.result(json::value(p.position.line));
  });
  d.dispatch_request(json::value(1), "textDocument/completion",
                     json::parse(R"({"textDocument":{"uri":"u"},"position":{"line":"3","character":0}})"));
  d.dispatch_request(json::value(2), "textDocument/completion", json::parse(R"({"textDocument":{"uri":"u"}})"));
  d.dispatch_request(json::value(3), "textDocument/completion",
                     json::parse(R"({"textDocument":{"uri":"u"},"position":{"line":-1,"character":0}})"));
  d.dispatch_request(json::value(4), "textDocument/completion",
                     json::parse(R"({"textDocument":{"uri":"u"},"position":{"line":5,"character":0}})"));
  d.dispatch_request(json::value(5), "nope", nullptr);
  ASSERT_EQ(c.sent.size(), 5u);
  EXPECT_EQ(c.sent[0].at("error").at("code"), json::value(-32602));
  EXPECT_EQ(c.sent[0].at("error").at("message"), json::value("params.position.line: expected integer, got string"));
  EXPECT_EQ(c.sent[1].at("error").at("message"), json::value("params.position: missing required field"));
  EXPECT_EQ(c.sent[2].at("error").at("message"), json::value("params.position.line: integer -1 out of range"));
  EXPECT_EQ(c.sent[3].at("result"), json::value(5));
  EXPECT_EQ(c.sent[4].at("error").at("code"), json::value(-32601));
  EXPECT_EQ(calls, 1);
}

TEST(Dispatcher, ArrayPathsAndExceptions) {
  capture c;
  dispatcher d(c.out);
  d.on_request<did_change_text_document_params>("change", [&](const did_change_text_document_params&, const reply_once&) {
    throw std::runtime_error("boom");
  });
  d.dispatch_request(json::value(1), "change",
                     json::parse(R"({"textDocument":{"uri":"u","version":1},"contentChanges":[{"text":"a"},{"range":{"start":{"line":0,"character":0},"end":{"line":0}},"text":"b"}]})"));
  d.dispatch_request(json::value(2), "change",
                     json::parse(R"({"textDocument":{"uri":"u","version":1},"contentChanges":[{"text":"a"}]})"));
  ASSERT_EQ(c.sent.size(), 2u);
  EXPECT_EQ(c.sent[0].at("error").at("message"), json::value("params.contentChanges[1].range.end.character: missing required field"));
  EXPECT_EQ(c.sent[1].at("error").at("code"), json::value(-32603));
}

TEST(Dispatcher, ResponsesAreMatchedById) {
  capture c;
  dispatcher d(c.out);
  int got = 0;
  d.call("window/workDoneProgress/create", json::object{{"token", "t"}}, [&](const json::value* r, const json::value* e) {
    got = r ? 1 : 2;
  });
  ASSERT_EQ(c.sent.size(), 1u);
  incoming resp = classify(json::serialize(json::object{{"jsonrpc", "2.0"}, {"id", c.sent[0].at("id")}, {"result", nullptr}}));
  d.dispatch_response(resp);
  EXPECT_EQ(got, 1);
  d.dispatch_response(resp);  // a duplicate is ignored
  EXPECT_EQ(got, 1);
}

TEST(Protocol, EncodingOmitsEmptyOptionalsAndKeepsCamelCase) {
  completion_list l;
  completion_item it;
  it.label = "x";
  it.filterText = "x";
  it.textEdit = text_edit{range{{1, 2}, {1, 3}}, "xy"};
  l.items.push_back(it);
  json::value v = json::value_from(l);
  EXPECT_EQ(v.at("isIncomplete"), json::value(false));
  const json::object& item = v.at("items").at(0).as_object();
  EXPECT_FALSE(item.contains("detail"));
  EXPECT_EQ(item.at("insertTextFormat"), json::value(1));
  EXPECT_EQ(item.at("textEdit").at("range").at("end").at("character"), json::value(3));
}

TEST(Classify, LoneSurrogatesAreReadAsReplacementCharacters) {
  incoming m = classify(R"({"jsonrpc":"2.0","method":"n","params":{"a":"x\ud800y","b":"\udc00","c":"\ud83d\ude00","d":"\\ud800"}})");
  ASSERT_EQ(m.what, incoming::kind::notification) << m.invalid_reason;
  EXPECT_EQ(m.replaced_surrogates, 2u);
  EXPECT_EQ(m.params.at("a").as_string(), "x\xEF\xBF\xBDy");
  EXPECT_EQ(m.params.at("b").as_string(), "\xEF\xBF\xBD");
  EXPECT_EQ(m.params.at("c").as_string(), "\xF0\x9F\x98\x80");  // a proper pair is kept
  EXPECT_EQ(m.params.at("d").as_string(), "\\ud800");           // an escaped backslash, not an escape
  // A high surrogate followed by another high one: both are lone.
  std::string body = R"("\uD800\uDBFF")";
  EXPECT_EQ(replace_lone_surrogates(body), 2u);
  EXPECT_EQ(body, R"("\uFFFD\uFFFD")");
}

TEST(Classify, InvalidUtf8IsAParseErrorNamingTheByte) {
  incoming m = classify("{\"jsonrpc\":\"2.0\",\"method\":\"n\",\"params\":{\"t\":\"\xC3\"}}");
  EXPECT_EQ(m.what, incoming::kind::invalid);
  EXPECT_EQ(m.invalid_code, error_code::parse_error);
  EXPECT_NE(m.invalid_reason.find("not valid UTF-8 (byte 45 of"), std::string::npos) << m.invalid_reason;
}

TEST(PeekMessage, FindsMethodAndUriInCutOrBrokenText) {
  message_peek p = peek_message(
      R"({"jsonrpc":"2.0","method" : "textDocument/didChange","params":{"textDocument":{"uri":"file:///a\"b.c","version":3},"contentChanges":[{"text":"cut off here)");
  EXPECT_EQ(p.method, "textDocument/didChange");
  EXPECT_EQ(p.uri, "file:///a\"b.c");
  EXPECT_TRUE(p.has_content_changes);
  message_peek none = peek_message("garbage\r\n");
  EXPECT_TRUE(none.method.empty());
  EXPECT_TRUE(none.uri.empty());
  EXPECT_FALSE(none.has_content_changes);
  EXPECT_TRUE(peek_message(R"({"uri":"file:///never-ends)").uri.empty());
}

#ifndef NDEBUG
TEST(OutboxDeathTest, InvalidUtf8IsFatalInDebugBuilds) {
  outbox out([](const std::string&) {});
  EXPECT_DEATH(out.send(json::object{{"message", "bad \xFF byte"}}), "not valid UTF-8");
}
#else
TEST(Outbox, NeverWritesInvalidUtf8) {
  // Text is repaired where it enters; should something slip through, release
  // builds repair it at the write point (debug builds stop there).
  std::string written;
  outbox out([&](const std::string& s) { written = s; });
  out.send(json::object{{"message", "bad \xFF byte"}});
  EXPECT_EQ(written, "{\"message\":\"bad \xEF\xBF\xBD byte\"}");
}
#endif

TEST(Classify, NumbersOutOfRangeAreReadAsNullAndNeverWrittenAsInfinity) {
  incoming m = classify(
      R"({"jsonrpc":"2.0","id":4,"method":"m","params":{"a":1e400,"b":[1,-1e400],"c":1e308,"d":{"e":"1e400"}}})");
  ASSERT_EQ(m.what, incoming::kind::request) << m.invalid_reason;
  EXPECT_EQ(m.replaced_non_finite, 2u);
  EXPECT_EQ(m.non_finite_at, "params.a");
  EXPECT_TRUE(m.params.at("a").is_null());
  EXPECT_TRUE(m.params.at("b").at(1).is_null());
  EXPECT_EQ(m.params.at("c").as_double(), 1e308);       // large but finite: kept
  EXPECT_EQ(m.params.at("d").at("e").as_string(), "1e400");  // a string, not a number
  EXPECT_FALSE(find_non_finite(m.params));
  // Whatever is echoed from it is JSON again.
  const std::string text = json::serialize(m.params);
  boost::system::error_code ec;
  json::parse(text, ec);
  EXPECT_FALSE(ec) << text;

  json::value v = json::object{{"x", json::array{1.5, std::numeric_limits<double>::infinity()}}};
  EXPECT_EQ(find_non_finite(v).value_or(""), "x[1]");
}

TEST(Outbox, NeverWritesANonFiniteNumber) {
  std::string written;
  outbox out([&](const std::string& s) { written = s; });
  out.send(json::object{{"a", std::numeric_limits<double>::infinity()},
                        {"b", std::numeric_limits<double>::quiet_NaN()},
                        {"c", 2.5}});
  boost::system::error_code ec;
  const json::value back = json::parse(written, ec);
  ASSERT_FALSE(ec) << written;
  EXPECT_TRUE(back.at("a").is_null());
  EXPECT_TRUE(back.at("b").is_null());
  EXPECT_EQ(back.at("c").as_double(), 2.5);
}

TEST(Protocol, QuickfillStatsParamsAreOptionalAndRecentIsANonNegativeInteger) {
  capture c;
  dispatcher d(c.out);
  std::vector<std::int64_t> seen;  // -1: no params
  d.on_request<std::optional<stats_params>>("quickfill/stats",
                                            [&](const std::optional<stats_params>& p, const reply_once& r) {
                                              seen.push_back(p && p->recent ? *p->recent : -1);
                                              r.result(nullptr);
                                            });
  d.dispatch_request(json::value(1), "quickfill/stats", nullptr);
  d.dispatch_request(json::value(2), "quickfill/stats", json::parse(R"({"recent":3})"));
  d.dispatch_request(json::value(3), "quickfill/stats", json::parse(R"({"recent":"all"})"));
  d.dispatch_request(json::value(4), "quickfill/stats", json::parse(R"({"recent":-1})"));
  d.dispatch_request(json::value(5), "quickfill/stats", json::parse(R"({})"));
  EXPECT_EQ(seen, (std::vector<std::int64_t>{-1, 3, -1}));
  ASSERT_EQ(c.sent.size(), 5u);
  for (std::size_t i : {2u, 3u}) {
    EXPECT_EQ(c.sent[i].at("error").at("code"), json::value(-32602));
    EXPECT_EQ(c.sent[i].at("error").at("message"), json::value("params.recent: expected a non-negative integer"));
  }
}

TEST(Protocol, QuickfillStatusKeepsItsKeysInOrderAndANullDaemon) {
  status_result s;
  s.modelLoaded = true;
  s.modelPath = "/m.gguf";
  s.openDocuments = 2;
  s.sources = json::array{json::object{{"id", "local"}}};
  s.routes = json::object{};
  json::value v = json::value_from(s);
  std::vector<std::string> keys;
  for (const auto& kv : v.as_object()) keys.emplace_back(kv.key());
  EXPECT_EQ(keys, (std::vector<std::string>{"modelLoaded", "modelLoading", "modelPath", "modelSource", "model",
                                            "positionEncoding", "openDocuments", "staleDocuments",
                                            "openDocumentBytes", "queued", "workerBusy", "sources", "routes",
                                            "daemon"}));
  EXPECT_TRUE(v.at("daemon").is_null());
  s.noModelReason = "none here";
  const status_result back = json::value_to<status_result>(json::value_from(s));
  EXPECT_EQ(back.noModelReason, "none here");
  EXPECT_EQ(back.openDocuments, 2u);
  EXPECT_EQ(back.sources, s.sources);
  EXPECT_EQ(json::value_to<report_result>(json::value_from(report_result{"<html>"})).html, "<html>");
}

TEST(Protocol, QuickfillExplanationWritesGatesByTriggerAndOnlyWhenKnown) {
  explain_result e;
  e.format = "psm";
  e.prompt = "ab";
  e.tokens = 2;
  e.parts.push_back(explain_part{"prefix", "file:///a", "ab", 2});
  EXPECT_FALSE(json::value_from(e).as_object().contains("gate"));
  e.gate.push_back(explain_gate{"automatic", -1.5, "setting"});
  e.gate.push_back(explain_gate{"explicit", -3, "default"});
  const json::value v = json::value_from(e);
  EXPECT_EQ(json::serialize(v.at("gate")),
            R"({"automatic":{"threshold":-1.5E0,"origin":"setting"},"explicit":{"threshold":-3E0,"origin":"default"}})");
  const explain_result back = json::value_to<explain_result>(v);
  ASSERT_EQ(back.gate.size(), 2u);
  EXPECT_EQ(back.gate[1].trigger, "explicit");
  EXPECT_EQ(back.gate[1].threshold, -3);
  EXPECT_EQ(back.parts[0].origin, "file:///a");
  std::string error;
  EXPECT_THROW(decode<explain_result>(json::parse(R"({"format":"f","prompt":"","tokens":0,"parts":[],"gate":{"automatic":{"threshold":"x","origin":""}}})"),
                                      "result", &error),
               decode_error);
  EXPECT_EQ(error, "result.gate.automatic.threshold: expected number, got string");
}

TEST(Protocol, QuickfillExplanationWritesTheLoadPlanByTriggerAndOnlyWhenKnown) {
  explain_result e;
  e.format = "psm";
  EXPECT_FALSE(json::value_from(e).as_object().contains("load"));
  explain_load_plan a;
  a.overBudget = a.degraded = a.shortened = a.backgroundPaused = true;
  a.estimateMs = 900;
  a.leftMs = 380;
  a.maxTokens = 8;
  a.candidates = 1;
  a.reroutedTo = "small";
  a.reason = "estimate 900 ms breaks the 380 ms left";
  e.load.push_back(explain_load{"automatic", a});
  e.load.push_back(explain_load{"explicit", explain_load_plan{}});
  const json::value v = json::value_from(e);
  EXPECT_EQ(v.at("load").at("automatic").at("reroutedTo").as_string(), "small");
  EXPECT_EQ(v.at("load").at("automatic").at("maxTokens").as_int64(), 8);
  EXPECT_FALSE(v.at("load").at("explicit").as_object().contains("reroutedTo")) << "absent when none";
  const explain_result back = json::value_to<explain_result>(v);
  ASSERT_EQ(back.load.size(), 2u);
  EXPECT_EQ(back.load[0].trigger, "automatic");
  EXPECT_TRUE(back.load[0].plan.shortened);
  EXPECT_EQ(back.load[0].plan.reroutedTo, "small");
  EXPECT_EQ(back.load[0].plan.reason, a.reason);
  EXPECT_FALSE(back.load[1].plan.reroutedTo);
  std::string error;
  json::value bad = v;
  bad.at("load").at("automatic").as_object()["maxTokens"] = "x";
  EXPECT_THROW(decode<explain_result>(bad, "result", &error), decode_error);
  EXPECT_EQ(error, "result.load.automatic.maxTokens: expected integer, got string");
}
