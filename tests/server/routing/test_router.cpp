// The router on test sources: route choice by trigger kind, fallback on
// source_failure, skips on the deadline, quota spend and refill with one
// notice per spend, metering on the board, audit lines and their privacy.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <span>
#include <sstream>

#include <boost/json.hpp>

#include "server/completion/api/source_failure.h"
#include "server/net/sha256.h"
#include "server/routing/audit_log.h"
#include "server/routing/make_router.h"
#include "server/routing/routing_settings.h"
#include "tests/server/routing/test_kind.h"

namespace qf::server::routing {
namespace {

namespace json = boost::json;
using namespace std::chrono_literals;

struct built {
  std::unique_ptr<completion_provider> router;
  std::shared_ptr<source_board> board = std::make_shared<source_board>();
  std::vector<std::string> notices;
  std::string error;
};

routing_settings settings_of(const std::string& sources, const std::string& routes = "{}") {
  routing_settings s;
  s.sources_json = json::parse(sources);
  s.routes_json = json::parse(routes);
  std::string err;
  EXPECT_TRUE(parse_routing(s, testing::test_kinds(), &err)) << err;
  return s;
}

void build(built& b, const routing_settings& s) {
  router_inputs in;
  in.settings = s;
  in.board = b.board;
  in.kinds = &testing::test_kinds();
  in.notify = [&b](const std::string& m) { b.notices.push_back(m); };
  b.router = make_router(in, &b.error);
}

completion_request request(bool explicit_trigger, std::chrono::milliseconds budget = 10s) {
  completion_request r;
  r.uri = "file:///home/someone/secret-project/main.py";
  r.text = std::string("def secret_function():\n    return 42\n");
  r.cursor = {1, 4};
  r.explicit_trigger = explicit_trigger;
  r.received = clock::now();
  r.deadline = r.received + budget;
  return r;
}

std::string first_text(const completion_result& r) { return r.items.empty() ? "" : r.items[0].insert_text; }

const json::object& source_stats(source_board& b, const std::string& name) {
  static json::value keep;
  keep = b.stats_json();
  for (const auto& v : keep.as_array())
    if (v.at("name").as_string() == name) return v.as_object();
  ADD_FAILURE() << "no stats for " << name;
  static json::object none;
  return none;
}

TEST(Router, AutomaticAndExplicitTakeTheirRoutes) {
  built b;
  build(b, settings_of(R"([{"name":"a","kind":"test","text":"A"},{"name":"b","kind":"test","text":"B"}])",
                       R"({"automatic":["a","b"],"explicit":["b","a"]})"));
  ASSERT_TRUE(b.router) << b.error;
  cancel_token c;
  EXPECT_EQ(first_text(b.router->complete(request(false), c)), "A");
  EXPECT_EQ(first_text(b.router->complete(request(true), c)), "B");
  EXPECT_EQ(first_text(b.router->complete(request(true), c)), "B");
  EXPECT_EQ(source_stats(*b.board, "a").at("requests").as_uint64(), 1u);
  EXPECT_EQ(source_stats(*b.board, "b").at("requests").as_uint64(), 2u);
  EXPECT_EQ(source_stats(*b.board, "b").at("promptTokens").as_int64(), 20);
  EXPECT_EQ(source_stats(*b.board, "b").at("completionTokens").as_int64(), 4);
  EXPECT_EQ(source_stats(*b.board, "b").at("latencyMs").at("count").as_uint64(), 2u);
}

TEST(Router, AMissingRouteTakesEverySourceInOrder) {
  routing_settings s = settings_of(R"([{"name":"a","kind":"test"},{"name":"b","kind":"test"}])");
  EXPECT_EQ(s.automatic, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(s.explicit_route, (std::vector<std::string>{"a", "b"}));
}

TEST(Router, AFailingSourceFallsBackToTheNext) {
  built b;
  build(b, settings_of(R"([{"name":"remote","kind":"test","fail":"unavailable"},{"name":"here","kind":"test","text":"H"}])"));
  ASSERT_TRUE(b.router) << b.error;
  cancel_token c;
  EXPECT_EQ(first_text(b.router->complete(request(false), c)), "H");
  const json::object& r = source_stats(*b.board, "remote");
  EXPECT_EQ(r.at("errors").as_uint64(), 1u);
  EXPECT_EQ(r.at("answered").as_uint64(), 0u);
  const json::value st = b.board->status_json();
  const json::object& remote = st.at("sources").as_array()[0].as_object();
  EXPECT_EQ(remote.at("state").as_string(), "degraded");
  EXPECT_EQ(remote.at("lastError").as_string(), "test endpoint refused to connect");
  EXPECT_EQ(st.at("sources").as_array()[1].at("state").as_string(), "ok");
}

TEST(Router, WhenEverySourceFailsTheRouterThrowsWithEachReason) {
  built b;
  build(b, settings_of(R"([{"name":"a","kind":"test","fail":"unavailable"},{"name":"b","kind":"test","fail":"timeout"}])"));
  ASSERT_TRUE(b.router);
  cancel_token c;
  try {
    b.router->complete(request(false), c);
    FAIL() << "expected source_failure";
  } catch (const source_failure& f) {
    EXPECT_EQ(f.kind(), failure_kind::timeout);
    const std::string what = f.what();
    EXPECT_NE(what.find("a: test endpoint refused to connect"), std::string::npos) << what;
    EXPECT_NE(what.find("b: test endpoint timed out"), std::string::npos) << what;
  }
}

TEST(Router, ASourceSlowerThanTheTimeLeftIsSkipped) {
  built b;
  build(b, settings_of(R"([{"name":"slow","kind":"test","text":"S","sleepMs":40},{"name":"fast","kind":"test","text":"F"}])"));
  ASSERT_TRUE(b.router);
  cancel_token c;
  // No latency known yet: the slow source is tried and answers.
  EXPECT_EQ(first_text(b.router->complete(request(false, 10s), c)), "S");
  // Its recent latency (>= 40 ms) exceeds a 5 ms budget: the next source answers.
  EXPECT_EQ(first_text(b.router->complete(request(false, 5ms), c)), "F");
  EXPECT_EQ(source_stats(*b.board, "slow").at("skipped").at("deadline").as_uint64(), 1u);
  // With time enough it is used again.
  EXPECT_EQ(first_text(b.router->complete(request(false, 10s), c)), "S");
}

TEST(Router, TheLastSourceOfARouteIsNeverSkippedForTheDeadline) {
  built b;
  build(b, settings_of(R"([{"name":"slow","kind":"test","text":"S","sleepMs":20}])"));
  ASSERT_TRUE(b.router);
  cancel_token c;
  EXPECT_EQ(first_text(b.router->complete(request(false, 10s), c)), "S");
  EXPECT_EQ(first_text(b.router->complete(request(false, 1ms), c)), "S");
}

TEST(Router, ASpentQuotaFallsBackOnceNoticedAndRefills) {
  built b;
  routing_settings s = settings_of(
      R"([{"name":"cloud","kind":"test","text":"C","promptTokens":50,"completionTokens":10,"quota":{"tokensPerHour":100}},
          {"name":"local","kind":"test-local","text":"L"}])");
  // The quota windows run on an injected clock.
  source_board::clock::time_point now = source_board::clock::time_point(std::chrono::hours(1000));
  router_inputs in;
  in.settings = s;
  in.board = b.board;
  in.kinds = &testing::test_kinds();
  in.notify = [&b](const std::string& m) { b.notices.push_back(m); };
  in.now = [&now] { return now; };
  b.router = make_router(in, &b.error);
  ASSERT_TRUE(b.router) << b.error;
  completion_provider& rt = *b.router;
  cancel_token c;
  EXPECT_EQ(first_text(rt.complete(request(false), c)), "C");  // 60 tokens
  EXPECT_EQ(first_text(rt.complete(request(false), c)), "C");  // 120: now spent
  EXPECT_TRUE(b.notices.empty());
  EXPECT_EQ(first_text(rt.complete(request(false), c)), "L");
  EXPECT_EQ(first_text(rt.complete(request(true), c)), "L");
  ASSERT_EQ(b.notices.size(), 1u) << "one notice per spend";
  EXPECT_NE(b.notices[0].find("\"cloud\" is spent (120 of 100 tokens used in the last hour)"), std::string::npos)
      << b.notices[0];
  EXPECT_NE(b.notices[0].find("completions come from \"local\""), std::string::npos) << b.notices[0];
  EXPECT_EQ(b.board->status_json().at("sources").as_array()[0].at("state").as_string(), "quota_spent");
  const json::object& q = source_stats(*b.board, "cloud").at("quota").as_object();
  EXPECT_EQ(q.at("tokensLastHour").as_int64(), 120);
  EXPECT_TRUE(q.at("spent").as_bool());
  EXPECT_EQ(source_stats(*b.board, "cloud").at("skipped").at("quota").as_uint64(), 2u);
  // An hour later the window has refilled: the source answers again...
  now += std::chrono::minutes(61);
  EXPECT_EQ(first_text(rt.complete(request(false), c)), "C");
  EXPECT_EQ(b.board->status_json().at("sources").as_array()[0].at("state").as_string(), "ok");
  EXPECT_EQ(first_text(rt.complete(request(false), c)), "C");
  // ... and the next spend is told again, once.
  EXPECT_EQ(first_text(rt.complete(request(false), c)), "L");
  EXPECT_EQ(first_text(rt.complete(request(false), c)), "L");
  EXPECT_EQ(b.notices.size(), 2u);
}

TEST(Router, ADailyQuotaCountsTheWholeDay) {
  token_quota q;
  q.set_limits({0, 1000});
  auto t = token_quota::clock::time_point(std::chrono::hours(5000));
  q.record(600, t);
  q.record(300, t + std::chrono::hours(5));
  EXPECT_FALSE(q.spent(t + std::chrono::hours(6)));
  q.record(100, t + std::chrono::hours(7));
  EXPECT_TRUE(q.spent(t + std::chrono::hours(7)));
  EXPECT_EQ(q.used_last_hour(t + std::chrono::hours(7)), 100);
  EXPECT_TRUE(q.spent(t + std::chrono::hours(23)));
  EXPECT_FALSE(q.spent(t + std::chrono::hours(25)));  // the first 600 left the window
  EXPECT_EQ(q.used_last_day(t + std::chrono::hours(25)), 400);
}

TEST(Router, ADownSourceIsPassedOverAndShownWithItsReason) {
  built b;
  build(b, settings_of(R"([{"name":"gone","kind":"local","model":"/nonexistent/model.gguf"},{"name":"t","kind":"test","text":"T"}])"));
  ASSERT_TRUE(b.router) << b.error;
  cancel_token c;
  EXPECT_EQ(first_text(b.router->complete(request(false), c)), "T");
  const json::value status = b.board->status_json();
  const json::object& gone = status.at("sources").as_array()[0].as_object();
  EXPECT_EQ(gone.at("state").as_string(), "down");
  EXPECT_FALSE(gone.at("lastError").as_string().empty());
  EXPECT_EQ(source_stats(*b.board, "gone").at("skipped").at("down").as_uint64(), 1u);
  ASSERT_EQ(b.notices.size(), 1u);
  EXPECT_NE(b.notices[0].find("source \"gone\" is not available"), std::string::npos) << b.notices[0];
}

TEST(Router, NoSourceAtAllMeansNoProvider) {
  built b;
  build(b, settings_of(R"([{"name":"gone","kind":"local","model":"/nonexistent/model.gguf"}])"));
  EXPECT_FALSE(b.router);
  EXPECT_NE(b.error.find("source \"gone\""), std::string::npos) << b.error;
}

TEST(Router, TheImplicitSourceIsTheFactorysProvider) {
  built b;
  routing_settings s = settings_of("[]");
  router_inputs in;
  in.settings = s;
  in.board = b.board;
  int made = 0;
  in.context.base.model_path = "/models/m.gguf";
  in.context.factory = [&made](const provider_options& o, std::string*) -> std::unique_ptr<completion_provider> {
    ++made;
    EXPECT_EQ(o.model_path, "/models/m.gguf");
    testing::test_options t;
    t.text = "I";
    return std::make_unique<testing::test_source>(t);
  };
  auto r = make_router(in, &b.error);
  ASSERT_TRUE(r);
  EXPECT_EQ(made, 1);
  EXPECT_EQ(r->describe(), "test source I");
  cancel_token c;
  EXPECT_EQ(first_text(r->complete(request(false), c)), "I");
  EXPECT_EQ(first_text(r->complete(request(true), c)), "I");
  EXPECT_EQ(source_stats(*b.board, "local").at("requests").as_uint64(), 2u);
  EXPECT_EQ(b.board->status_json().at("routes").at("automatic").as_array()[0].as_string(), "local");
}

// ---- audit ----

std::string read_file(const std::string& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string temp_path(const std::string& name) {
  return (std::filesystem::temp_directory_path() / ("qf-routing-" + std::to_string(::getpid()) + "-" + name)).string();
}

TEST(Audit, OneLinePerRemoteCallWithoutUriOrCode) {
  const std::string path = temp_path("audit.jsonl");
  std::filesystem::remove(path);
  built b;
  routing_settings s = settings_of(
      R"([{"name":"cloud","kind":"test","fail":"unavailable"},{"name":"cloud2","kind":"test","text":"return 43"},
          {"name":"here","kind":"test-local","text":"L"}])",
      R"({"automatic":["cloud","cloud2"],"explicit":["here"]})");
  s.audit_path = path;
  build(b, s);
  ASSERT_TRUE(b.router) << b.error;
  cancel_token c;
  const completion_request req = request(false);
  EXPECT_EQ(first_text(b.router->complete(req, c)), "return 43");
  EXPECT_EQ(first_text(b.router->complete(request(true), c)), "L");  // local: no line
  struct stat st{};
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  const std::string text = read_file(path);
  std::vector<json::object> lines;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) lines.push_back(json::parse(l).as_object());
  ASSERT_EQ(lines.size(), 2u) << text;
  EXPECT_EQ(lines[0].at("source").as_string(), "cloud");
  EXPECT_EQ(lines[0].at("status").as_string(), "unavailable");
  EXPECT_EQ(lines[1].at("source").as_string(), "cloud2");
  EXPECT_EQ(lines[1].at("status").as_string(), "ok");
  EXPECT_EQ(lines[1].at("promptTokens").as_int64(), 10);
  EXPECT_EQ(lines[1].at("completionTokens").as_int64(), 2);
  EXPECT_TRUE(lines[1].at("latencyMs").is_number());
  EXPECT_EQ(lines[1].at("document").as_string(), uri_hash(req.uri));
  EXPECT_EQ(lines[1].at("document").as_string().size(), 64u);
  EXPECT_TRUE(lines[1].at("time").as_string().ends_with("Z"));
  EXPECT_FALSE(lines[1].contains("code"));
  // Privacy: neither the URI (nor any part of its path) nor the code.
  for (const char* secret : {"secret-project", "main.py", "someone", "secret_function", "return 42", "return 43"})
    EXPECT_EQ(text.find(secret), std::string::npos) << secret;
  std::filesystem::remove(path);
}

TEST(Audit, IncludeCodeWritesTheCodeAroundTheCursor) {
  const std::string path = temp_path("audit-code.jsonl");
  std::filesystem::remove(path);
  {
    std::ofstream pre(path);  // an existing, world-readable file is made private
    pre << "";
  }
  ::chmod(path.c_str(), 0644);
  built b;
  routing_settings s = settings_of(R"([{"name":"cloud","kind":"test","text":"return 43"}])");
  s.audit_path = path;
  s.audit_include_code = true;
  build(b, s);
  ASSERT_TRUE(b.router);
  cancel_token c;
  b.router->complete(request(false), c);
  struct stat st{};
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  const json::object line = json::parse(read_file(path)).as_object();
  EXPECT_EQ(line.at("code").at("before").as_string(), "def secret_function():\n    ");
  EXPECT_EQ(line.at("code").at("after").as_string(), "return 42\n");
  EXPECT_EQ(line.at("code").at("suggestions").as_array()[0].as_string(), "return 43");
  EXPECT_EQ(read_file(path).find("secret-project"), std::string::npos) << "never the URI";
  std::filesystem::remove(path);
}

TEST(Audit, AnAuditLogThatCannotBeOpenedIsToldAndRoutingGoesOn) {
  built b;
  routing_settings s = settings_of(R"([{"name":"cloud","kind":"test","text":"T"}])");
  s.audit_path = "/nonexistent-dir/audit.jsonl";
  build(b, s);
  ASSERT_TRUE(b.router);
  ASSERT_EQ(b.notices.size(), 1u);
  EXPECT_NE(b.notices[0].find("cannot open the audit log /nonexistent-dir/audit.jsonl"), std::string::npos);
  cancel_token c;
  EXPECT_EQ(first_text(b.router->complete(request(false), c)), "T");
}

// A repository (or anyone) that plants a symbolic link, a FIFO or a hard
// link at the audit path gets nothing appended to the file it points at.
TEST(Audit, ALinkOrAFifoAtTheAuditPathIsRefused) {
  const std::string target = temp_path("victim-bashrc");
  const std::string link = temp_path("audit-link.jsonl");
  const std::string fifo = temp_path("audit-fifo.jsonl");
  const std::string hard = temp_path("audit-hard.jsonl");
  for (const auto& p : {target, link, fifo, hard}) std::filesystem::remove(p);
  { std::ofstream(target) << "export PATH=/usr/bin\n"; }
  ::chmod(target.c_str(), 0644);
  ASSERT_EQ(::symlink(target.c_str(), link.c_str()), 0);
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  ASSERT_EQ(::link(target.c_str(), hard.c_str()), 0);
  for (const auto& [path, why] : {std::pair{link, "symbolic link"}, std::pair{fifo, "not a regular file"},
                                   std::pair{hard, "hard links"}}) {
    built b;
    routing_settings s = settings_of(R"([{"name":"cloud","kind":"test","text":"T"}])");
    s.audit_path = path;
    build(b, s);
    ASSERT_TRUE(b.router);
    ASSERT_EQ(b.notices.size(), 1u) << path;
    EXPECT_NE(b.notices[0].find("cannot open the audit log " + path), std::string::npos) << b.notices[0];
    EXPECT_NE(b.notices[0].find(why), std::string::npos) << b.notices[0];
    cancel_token c;
    EXPECT_EQ(first_text(b.router->complete(request(false), c)), "T");
  }
  EXPECT_EQ(read_file(target), "export PATH=/usr/bin\n");  // untouched
  struct stat st{};
  ASSERT_EQ(::stat(target.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0644u);  // not chmod-ed through the link
  for (const auto& p : {target, link, fifo, hard}) std::filesystem::remove(p);
}

TEST(Audit, ARelativeAuditPathIsRefused) {
  built b;
  routing_settings s = settings_of(R"([{"name":"cloud","kind":"test","text":"T"}])");
  s.audit_path = "audit.jsonl";
  build(b, s);
  ASSERT_TRUE(b.router);
  ASSERT_EQ(b.notices.size(), 1u);
  EXPECT_NE(b.notices[0].find("not absolute"), std::string::npos) << b.notices[0];
}

// The document hash is salted per install: not the plain SHA-256 of the URI.
TEST(Audit, DocumentHashesAreSalted) {
  const std::string uri = "file:///home/someone/secret-project/main.py";
  const std::string h = uri_hash(uri);
  EXPECT_EQ(h.size(), 64u);
  EXPECT_EQ(h, uri_hash(uri));
  net::sha256 plain;
  plain.update(std::span<const char>(uri.data(), uri.size()));
  EXPECT_NE(h, plain.hex_digest());
}

}  // namespace
}  // namespace qf::server::routing
