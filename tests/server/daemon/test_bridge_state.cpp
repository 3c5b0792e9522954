// The bridge's session record: what it replays to a new daemon, the one
// error per request in flight, progress ends, and the generation of the
// daemon's own requests.
#include <gtest/gtest.h>

#include <random>

#include <boost/json.hpp>

#include "indexing/document_store.h"
#include "server/daemon/bridge_state.h"
#include "text/lines.h"

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

namespace {

// A didChange of `changes` (each {"range": ..., "text": ...}, or {"text"} for a full text).
std::string did_change_batch(const std::string& uri, std::int64_t version, json::array changes) {
  return msg({{"method", "textDocument/didChange"},
              {"params", json::object{{"textDocument", json::object{{"uri", uri}, {"version", version}}},
                                      {"contentChanges", std::move(changes)}}}});
}

json::object range_change(int sl, int sc, int el, int ec, const std::string& text) {
  return json::object{{"range", json::object{{"start", json::object{{"line", sl}, {"character", sc}}},
                                             {"end", json::object{{"line", el}, {"character", ec}}}}},
                      {"text", text}};
}

void initialize_with(bridge_state& s, const char* encoding) {
  s.from_client(msg({{"id", 1}, {"method", "initialize"}, {"params", json::object{{"capabilities", json::object{}}}}}));
  s.from_daemon(msg({{"id", 1}, {"result", json::object{{"capabilities", json::object{{"positionEncoding", encoding}}}}}}));
  s.from_client(msg({{"method", "initialized"}, {"params", json::object{}}}));
}

}  // namespace

// What is replayed is what the server had: an edit it could not apply (a
// line past the end, a version that does not grow) puts the document out of
// sync, later edits keep it so, and a full text brings it back.
TEST(BridgeState, DocumentTheServerHasOutOfSyncIsReplayedOnlyAfterAFullText) {
  bridge_state s;
  initialize(s);
  const std::string uri = "file:///a.py";
  s.from_client(did_open(uri, "one\ntwo"));
  s.from_client(did_change_batch(uri, 2, json::array{range_change(5, 0, 5, 0, "x")}));  // line 5 does not exist
  EXPECT_FALSE(s.document(uri)->in_sync);
  s.from_client(did_change_batch(uri, 3, json::array{range_change(0, 0, 0, 0, "y")}));
  EXPECT_FALSE(s.document(uri)->in_sync);
  // A bad edit before the full text in the same batch does not matter (the server starts at the full text).
  s.from_client(did_change_batch(uri, 4, json::array{range_change(9, 0, 9, 0, "?"), json::object{{"text", "a\r\nb"}},
                                                     range_change(1, 1, 1, 1, "c")}));
  ASSERT_TRUE(s.document(uri)->in_sync);
  EXPECT_EQ(s.document(uri)->text, "a\r\nbc");
  s.from_client(did_change_batch(uri, 4, json::array{range_change(0, 0, 0, 0, "z")}));  // version 4 again
  EXPECT_FALSE(s.document(uri)->in_sync);
  s.from_client(did_change_batch(uri, 5, json::array{json::object{{"text", "fresh"}}}));
  s.daemon_lost();
  const std::vector<std::string> r = s.replay();
  ASSERT_EQ(opened_in(r), std::vector<std::string>{uri});
  const json::value open = json::parse(r.back());
  EXPECT_EQ(open.at("params").at("textDocument").at("text").as_string(), "fresh");
  EXPECT_EQ(open.at("params").at("textDocument").at("version").as_int64(), 5);
}

// The bridge keeps only the text, and applies edits without the document
// store's line table; after any sequence of edits, in any position encoding,
// with every kind of line break and characters of 1 to 4 bytes, its copy is
// the store's (the daemon's) text, and out of sync exactly when the store's
// document is stale.
TEST(BridgeState, CopyMatchesTheDocumentStoreAfterRandomEdits) {
  const std::vector<std::string> pieces = {"a", "bc", "\n", "\r\n", "\r", "\u00e9", "\u4e2d", "\U0001F600", " ", "xyz\n"};
  for (const char* encoding : {"utf-8", "utf-16", "utf-32"}) {
    const qf::text::position_encoding enc = std::string(encoding) == "utf-8"    ? qf::text::position_encoding::utf8
                                            : std::string(encoding) == "utf-32" ? qf::text::position_encoding::utf32
                                                                                : qf::text::position_encoding::utf16;
    std::mt19937 rng(7);
    auto pick = [&](int n) { return static_cast<int>(rng() % static_cast<unsigned>(n)); };
    auto random_text = [&](int max_pieces) {
      std::string t;
      for (int i = pick(max_pieces + 1); i > 0; --i) t += pieces[static_cast<std::size_t>(pick(static_cast<int>(pieces.size())))];
      return t;
    };
    bridge_state s;
    initialize_with(s, encoding);
    qf::index::document_store store;
    const std::string uri = "file:///r.py";
    std::string first = random_text(12);
    s.from_client(did_open(uri, first));
    ASSERT_TRUE(store.open(uri, "python", 1, first, nullptr));
    std::int64_t version = 1;
    int out_of_sync = 0, resynced = 0;
    for (int step = 0; step < 1000; ++step) {
      // Mostly growing versions, now and then a repeated one.
      version += pick(40) == 0 ? 0 : 1;
      json::array batch;
      std::vector<qf::index::text_change> changes;
      for (int n = 1 + (pick(4) == 0 ? pick(3) : 0); n > 0; --n) {
        qf::index::text_change c;
        c.text = random_text(3);
        if (pick(6) == 0) {
          c.text = random_text(40);
          batch.push_back(json::object{{"text", c.text}});
        } else {
          // Now and then a line past the end; characters up to a few past a line's end.
          const int lines = static_cast<int>(qf::text::split_lines(store.lookup(uri).doc->text).size());
          const int sl = pick(60) == 0 ? lines : pick(lines), sc = pick(6);
          const int el = std::min(sl + (pick(4) == 0 ? pick(3) : 0), std::max(sl, lines - 1)), ec = el == sl ? sc + pick(3) : pick(6);
          c.range = qf::index::text_range{static_cast<std::uint32_t>(sl), static_cast<std::uint32_t>(sc),
                                          static_cast<std::uint32_t>(el), static_cast<std::uint32_t>(ec)};
          batch.push_back(range_change(sl, sc, el, ec, c.text));
        }
        changes.push_back(std::move(c));
      }
      const bool was = s.document(uri)->in_sync;
      s.from_client(did_change_batch(uri, version, std::move(batch)));
      store.change(uri, version, changes, enc, nullptr);
      const qf::index::document_store::lookup_result stored = store.lookup(uri);
      const bool in_sync = stored.state == qf::index::doc_state::open;
      ASSERT_NE(s.document(uri), nullptr);
      ASSERT_EQ(s.document(uri)->in_sync, in_sync) << encoding << " step " << step;
      if (in_sync) {
        ASSERT_EQ(s.document(uri)->text, stored.doc->text) << encoding << " step " << step;
      }
      out_of_sync += in_sync ? 0 : 1;

      resynced += !was && in_sync ? 1 : 0;
    }
    // The sequence went through both states, and compared the texts often
    // (else this test would prove little).
    EXPECT_GT(out_of_sync, 0) << encoding;
    EXPECT_GT(resynced, 0) << encoding;
    EXPECT_LT(out_of_sync, 500) << encoding;
  }
}

// Typing is found from the last edit's line; a "\n" typed at the start of a
// line that follows a lone "\r" joins them into one break, which moves that
// line's start: the next edits still land where the server puts them.
TEST(BridgeState, NewlineTypedAfterALoneCarriageReturnMovesTheLine) {
  bridge_state s;
  initialize(s);
  qf::index::document_store store;
  const std::string uri = "file:///cr.py";
  s.from_client(did_open(uri, "a\rb"));
  ASSERT_TRUE(store.open(uri, "python", 1, "a\rb", nullptr));
  const struct {
    int line, character;
    const char* text;
  } edits[] = {{1, 0, "\n"}, {1, 1, "Y"}, {1, 0, "Z"}, {0, 1, "\r"}, {1, 0, "\n"}, {2, 3, "!"}};
  std::int64_t version = 1;
  for (const auto& e : edits) {
    ++version;
    s.from_client(did_change_batch(uri, version, json::array{range_change(e.line, e.character, e.line, e.character, e.text)}));
    qf::index::text_change c;
    c.range = qf::index::text_range{static_cast<std::uint32_t>(e.line), static_cast<std::uint32_t>(e.character),
                                    static_cast<std::uint32_t>(e.line), static_cast<std::uint32_t>(e.character)};
    c.text = e.text;
    ASSERT_TRUE(store.change(uri, version, {c}, qf::text::position_encoding::utf16, nullptr));
    ASSERT_TRUE(s.document(uri)->in_sync);
    EXPECT_EQ(s.document(uri)->text, store.lookup(uri).doc->text) << "after v" << version;
  }
  EXPECT_EQ(s.document(uri)->text, "a\r\n\r\nZbY!");
}
