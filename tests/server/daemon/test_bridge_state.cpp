// The bridge's session record: what it replays to a new daemon, the one
// error per request in flight, progress ends, and the generation of the
// daemon's own requests.
#include <gtest/gtest.h>

#include <boost/json.hpp>

#include "server/daemon/bridge_state.h"

namespace json = boost::json;
using qf::server::daemon::bridge_state;

namespace {

std::string msg(json::object o) {
  o["jsonrpc"] = "2.0";
  return json::serialize(o);
}

std::string did_change(const std::string& uri, int version, int line, int ch, const std::string& text) {
  json::object range{{"start", json::object{{"line", line}, {"character", ch}}},
                     {"end", json::object{{"line", line}, {"character", ch}}}};
  return msg({{"method", "textDocument/didChange"},
              {"params", json::object{{"textDocument", json::object{{"uri", uri}, {"version", version}}},
                                      {"contentChanges", json::array{json::object{{"range", range}, {"text", text}}}}}}});
}

void initialize(bridge_state& s) {
  ASSERT_TRUE(s.from_client(msg({{"id", 1}, {"method", "initialize"}, {"params", json::object{{"capabilities", json::object{}}}}})));
  ASSERT_TRUE(s.from_daemon(msg({{"id", 1}, {"result", json::object{{"capabilities", json::object{{"positionEncoding", "utf-16"}}}}}})));
  ASSERT_TRUE(s.from_client(msg({{"method", "initialized"}, {"params", json::object{}}})));
}

}  // namespace

TEST(BridgeState, ReplaysInitializeSettingsAndCurrentText) {
  bridge_state s;
  initialize(s);
  s.from_client(msg({{"method", "workspace/didChangeConfiguration"},
                     {"params", json::object{{"settings", json::object{{"quickfill", json::object{{"model", "m"}}}}}}}}));
  s.from_client(msg({{"method", "textDocument/didOpen"},
                     {"params", json::object{{"textDocument", json::object{{"uri", "file:///a.py"},
                                                                           {"languageId", "python"},
                                                                           {"version", 1},
                                                                           {"text", "x = 1\n"}}}}}}));
  s.from_client(did_change("file:///a.py", 2, 0, 5, "0"));  // "x = 10\n"; UTF-16 columns
  s.from_client(did_change("file:///a.py", 3, 1, 0, "é = 2"));
  s.from_client(did_change("file:///a.py", 4, 1, 1, "\u00e9"));  // after the first é (one UTF-16 unit)
  s.from_client(msg({{"method", "textDocument/didOpen"},
                     {"params", json::object{{"textDocument", json::object{{"uri", "file:///b.py"},
                                                                           {"languageId", "python"},
                                                                           {"version", 1},
                                                                           {"text", "gone"}}}}}}));
  s.from_client(msg({{"method", "textDocument/didClose"}, {"params", json::object{{"textDocument", json::object{{"uri", "file:///b.py"}}}}}}));
  ASSERT_NE(s.document("file:///a.py"), nullptr);
  EXPECT_EQ(s.document("file:///a.py")->text, "x = 10\n\u00e9\u00e9 = 2");
  EXPECT_EQ(s.document("file:///b.py"), nullptr);

  s.daemon_lost();
  const std::vector<std::string> r = s.replay();
  ASSERT_EQ(r.size(), 4u);
  json::value init = json::parse(r[0]);
  EXPECT_EQ(init.at("method").as_string(), "initialize");
  EXPECT_TRUE(init.at("id").is_string());  // the bridge's own id: its answer is not the editor's
  EXPECT_EQ(json::parse(r[1]).at("method").as_string(), "initialized");
  EXPECT_EQ(json::parse(r[2]).at("method").as_string(), "workspace/didChangeConfiguration");
  json::value open = json::parse(r[3]);
  EXPECT_EQ(open.at("method").as_string(), "textDocument/didOpen");
  EXPECT_EQ(open.at("params").at("textDocument").at("text").as_string(), "x = 10\n\u00e9\u00e9 = 2");
  EXPECT_EQ(open.at("params").at("textDocument").at("version").as_int64(), 4);
  // The answer to the replayed initialize is swallowed; others pass.
  EXPECT_FALSE(s.from_daemon(msg({{"id", init.at("id")}, {"result", json::object{}}})));
  EXPECT_TRUE(s.from_daemon(msg({{"method", "window/logMessage"}, {"params", json::object{{"type", 3}, {"message", "m"}}}})));
}

TEST(BridgeState, EachRequestInFlightGetsOneErrorAndProgressEnds) {
  bridge_state s;
  initialize(s);
  s.from_client(msg({{"id", 7}, {"method", "textDocument/completion"}, {"params", json::object{}}}));
  s.from_client(msg({{"id", "x"}, {"method", "quickfill/status"}, {"params", nullptr}}));
  s.from_client(msg({{"id", 8}, {"method", "textDocument/completion"}, {"params", json::object{}}}));
  s.from_daemon(msg({{"id", 8}, {"result", json::object{{"items", json::array{}}}}}));  // answered: not in flight
  json::object begin{{"kind", "begin"}, {"title", "load"}};
  json::object progress{{"token", "t1"}, {"value", begin}};
  s.from_daemon(msg({{"method", "$/progress"}, {"params", progress}}));
  EXPECT_EQ(s.in_flight(), 2u);
  std::vector<std::string> lost = s.daemon_lost();
  ASSERT_EQ(lost.size(), 3u);
  int errors = 0, ends = 0;
  for (const auto& l : lost) {
    json::value v = json::parse(l);
    if (v.as_object().contains("error")) {
      ++errors;
      EXPECT_EQ(v.at("error").at("code").as_int64(), -32803);
      EXPECT_TRUE(v.at("id") == json::value(7) || v.at("id") == json::value("x"));
    } else {
      ++ends;
      EXPECT_EQ(v.at("params").at("value").at("kind").as_string(), "end");
    }
  }
  EXPECT_EQ(errors, 2);
  EXPECT_EQ(ends, 1);
  EXPECT_TRUE(s.daemon_lost().empty());  // exactly once
}

TEST(BridgeState, DaemonRequestIdsCarryTheirGeneration) {
  bridge_state s;
  initialize(s);
  auto fwd = s.from_daemon(msg({{"id", 3}, {"method", "window/workDoneProgress/create"}, {"params", json::object{{"token", "t"}}}}));
  ASSERT_TRUE(fwd);
  const json::value id = json::parse(*fwd).at("id");
  ASSERT_TRUE(id.is_string());
  // The editor's answer goes back with the daemon's own id...
  auto back = s.from_client(msg({{"id", id}, {"result", nullptr}}));
  ASSERT_TRUE(back);
  EXPECT_EQ(json::parse(*back).at("id"), json::value(3));
  // ...but not to a daemon of a later generation.
  s.daemon_lost();
  EXPECT_FALSE(s.from_client(msg({{"id", id}, {"result", nullptr}})));
}

TEST(BridgeState, UnansweredInitializeIsReplayedWithTheEditorsId) {
  bridge_state s;
  s.from_client(msg({{"id", 1}, {"method", "initialize"}, {"params", json::object{{"capabilities", json::object{}}}}}));
  EXPECT_TRUE(s.daemon_lost().empty());  // no error: the new daemon answers it
  const auto r = s.replay();
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(json::parse(r[0]).at("id"), json::value(1));
  EXPECT_TRUE(s.from_daemon(msg({{"id", 1}, {"result", json::object{}}})));
}

namespace {

std::string did_open(const std::string& uri, const std::string& text) {
  return msg({{"method", "textDocument/didOpen"},
              {"params", json::object{{"textDocument", json::object{{"uri", uri},
                                                                    {"languageId", "python"},
                                                                    {"version", 1},
                                                                    {"text", text}}}}}});
}

std::vector<std::string> opened_in(const std::vector<std::string>& replay) {
  std::vector<std::string> uris;
  for (const auto& m : replay) {
    json::value v = json::parse(m);
    if (v.at("method").as_string() == "textDocument/didOpen")
      uris.emplace_back(v.at("params").at("textDocument").at("uri").as_string());
  }
  return uris;
}

}  // namespace

TEST(BridgeState, DocumentOpenThroughTwoDaemonStopsIsQuarantined) {
  bridge_state s;
  initialize(s);
  s.from_client(did_open("file:///crash.py", "boom"));
  // First stop: replayed.
  std::vector<std::string> lost = s.daemon_lost();
  EXPECT_TRUE(lost.empty());
  EXPECT_EQ(opened_in(s.replay()), std::vector<std::string>{"file:///crash.py"});
  s.from_client(did_open("file:///new.py", "fine"));  // opened after the first stop
  // Second stop with it replayed: quarantined, and the editor is told which.
  lost = s.daemon_lost();
  ASSERT_EQ(lost.size(), 1u);
  json::value shown = json::parse(lost[0]);
  EXPECT_EQ(shown.at("method").as_string(), "window/showMessage");
  EXPECT_EQ(shown.at("params").at("type").as_int64(), 1);
  const std::string text(shown.at("params").at("message").as_string());
  EXPECT_NE(text.find("file:///crash.py"), std::string::npos) << text;
  EXPECT_EQ(text.find("file:///new.py"), std::string::npos) << text;
  EXPECT_TRUE(s.quarantined("file:///crash.py"));
  EXPECT_FALSE(s.quarantined("file:///new.py"));
  EXPECT_EQ(opened_in(s.replay()), std::vector<std::string>{"file:///new.py"});
  // Nothing about it reaches a daemon again; a request about it is answered here.
  EXPECT_FALSE(s.from_client(did_change("file:///crash.py", 2, 0, 0, "x")));
  EXPECT_FALSE(s.from_client(did_open("file:///crash.py", "again")));
  json::object at{{"textDocument", json::object{{"uri", "file:///crash.py"}}},
                  {"position", json::object{{"line", 0}, {"character", 0}}}};
  EXPECT_FALSE(s.from_client(msg({{"id", 9}, {"method", "textDocument/completion"}, {"params", at}})));
  const std::vector<std::string> answers = s.take_for_client();
  ASSERT_EQ(answers.size(), 1u);
  json::value a = json::parse(answers[0]);
  EXPECT_EQ(a.at("id"), json::value(9));
  EXPECT_EQ(a.at("error").at("code").as_int64(), -32803);
  EXPECT_NE(std::string(a.at("error").at("message").as_string()).find("file:///crash.py"), std::string::npos);
  EXPECT_TRUE(s.take_for_client().empty());
  EXPECT_EQ(s.in_flight(), 0u);
  // The rest of the session goes on.
  EXPECT_TRUE(s.from_client(did_change("file:///new.py", 2, 0, 0, "y")));
  EXPECT_EQ(s.document("file:///new.py")->text, "yfine");
}

TEST(BridgeState, NumberOutOfRangeInInitializeIsNotReplayedAsInfinity) {
  bridge_state s;
  ASSERT_TRUE(s.from_client(
      R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"capabilities":{},"initializationOptions":{"x":1e400}}})"));
  ASSERT_TRUE(s.from_daemon(msg({{"id", 1}, {"result", json::object{{"capabilities", json::object{}}}}})));
  s.daemon_lost();
  const std::vector<std::string> r = s.replay();
  ASSERT_FALSE(r.empty());
  EXPECT_EQ(r[0].find("Infinity"), std::string::npos) << r[0];
  boost::system::error_code ec;
  const json::value v = json::parse(r[0], ec);
  ASSERT_FALSE(ec) << r[0];
  EXPECT_TRUE(v.at("params").at("initializationOptions").at("x").is_null());
}

TEST(BridgeState, UnreadableEditMarksTheCopyOutOfSync) {
  bridge_state s;
  initialize(s);
  s.from_client(did_open("file:///a.py", "abc"));
  // Not JSON: the daemon answers it; our copy is no longer the editor's.
  EXPECT_TRUE(s.from_client(R"({"jsonrpc":"2.0","method":"textDocument/didChange","params":{"textDocument":{"uri":"file:///a.py"},"contentChanges":[{"text":"x"}]},)"));
  s.daemon_lost();
  EXPECT_TRUE(opened_in(s.replay()).empty());
}
