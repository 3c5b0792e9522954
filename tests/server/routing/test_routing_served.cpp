// Routing end to end through the real quickfill binary with two real local
// models (the bundled one and a copy under another name): routes by trigger
// kind, a down source falling back, a routing change at run time, and a model
// refused because it does not fit in memory.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <thread>

#include <boost/json.hpp>

#include "tests/server/cli/served_model.h"

namespace qf::test {
namespace {

namespace json = boost::json;
namespace fs = std::filesystem;

const std::string bundled = std::string(QUICKFILL_SOURCE_DIR) + "/models/quickfill-tiny-code.gguf";

// The real server with routing settings (served_model.h drives it). The
// sources name model files, so they go in the user config file (a directory
// of this test's own as XDG_CONFIG_HOME), the rest in initializationOptions.
class served : public served_model {
 public:
  ~served() {
    std::error_code ec;
    fs::remove_all(config_home_, ec);
  }
  bool start(const json::object& quickfill, std::string* error) {
    const std::string log =
        (fs::temp_directory_path() / ("qf-routing-served-" + std::to_string(::getpid()) + ".log")).string();
    static int counter = 0;
    config_home_ = fs::temp_directory_path() /
                   ("qf-routing-config-" + std::to_string(::getpid()) + "-" + std::to_string(counter++));
    fs::create_directories(config_home_ / "quickfill");
    json::object user;
    if (const json::value* s = quickfill.if_contains("sources")) user["sources"] = *s;
    std::ofstream(config_home_ / "quickfill" / "config.json") << json::serialize(json::object{{"quickfill", user}});
    fs::permissions(config_home_ / "quickfill" / "config.json", fs::perms::owner_read | fs::perms::owner_write);
    ::setenv("XDG_CONFIG_HOME", config_home_.c_str(), 1);
    json::object options = editor(quickfill);
    options["completion"] = json::object{{"explicitDeadlineMs", 60000}, {"autoDeadlineMs", 60000},
                                         {"maxTokens", 4}, {"maxTokensExplicit", 4}, {"autoTriggerMidWord", true}};
    return start_with({}, options, log, error, /*require_model=*/false);
  }
  void open(const std::string& uri, const std::string& text) {
    notify("textDocument/didOpen", json::object{{"textDocument", json::object{{"uri", uri}, {"languageId", "python"},
                                                                             {"version", 1}, {"text", text}}}});
  }
  // A completion at column `col` of the one-line document `uri`; triggerKind 1 (invoked) or 2 (automatic).
  std::optional<json::value> complete(const std::string& uri, int col, int trigger_kind) {
    return call("textDocument/completion",
                json::object{{"textDocument", json::object{{"uri", uri}}},
                             {"position", json::object{{"line", 0}, {"character", col}}},
                             {"context", json::object{{"triggerKind", trigger_kind}}}});
  }
  // What the editor sends: everything but the sources (they are the user config file's).
  static json::object editor(json::object quickfill) {
    quickfill.erase("sources");
    return quickfill;
  }
  // One source of the quickfill/status or quickfill/stats answer ({} when absent).
  json::object source(const std::string& from, const std::string& name) {
    auto r = call(from == "status" ? "quickfill/status" : "quickfill/stats", json::object{});
    if (!r) return {};
    for (const auto& s : r->at("sources").as_array())
      if (s.at("name").as_string() == name) return s.as_object();
    return {};
  }

 private:
  fs::path config_home_;
};

class RoutingServed : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!fs::exists(bundled)) GTEST_SKIP() << "no bundled model";
    dir_ = fs::temp_directory_path() / ("qf-routing-e2e-" + std::to_string(::getpid()));
    fs::create_directories(dir_);
    second_ = (dir_ / "second-model.gguf").string();
    fs::copy_file(bundled, second_, fs::copy_options::overwrite_existing);
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  json::array two_sources() const {
    return json::array{json::object{{"name", "tiny"}, {"kind", "local"}, {"model", bundled}},
                       json::object{{"name", "second"}, {"kind", "local"}, {"model", second_}}};
  }
  fs::path dir_;
  std::string second_;
};

std::uint64_t requests(const json::object& s) { return s.empty() ? 0 : s.at("requests").to_number<std::uint64_t>(); }

TEST_F(RoutingServed, AutomaticAndExplicitRequestsTakeTheirRoutes) {
  served s;
  std::string error;
  ASSERT_TRUE(s.start(json::object{{"sources", two_sources()},
                                   {"routes", json::object{{"automatic", json::array{"tiny", "second"}},
                                                           {"explicit", json::array{"second", "tiny"}}}},
                                   {"routing", json::object{{"memoryReserveMiB", 0}}}},
                      &error))
      << error;
  EXPECT_EQ(s.source("status", "tiny").at("state").as_string(), "ok");
  EXPECT_EQ(s.source("status", "second").at("state").as_string(), "ok") << json::serialize(s.source("status", "second"));
  s.open("file:///t/a.py", "def add(a, b):");
  ASSERT_TRUE(s.complete("file:///t/a.py", 14, 2));  // automatic
  EXPECT_EQ(requests(s.source("stats", "tiny")), 1u);
  EXPECT_EQ(requests(s.source("stats", "second")), 0u);
  ASSERT_TRUE(s.complete("file:///t/a.py", 14, 1));  // invoked
  ASSERT_TRUE(s.complete("file:///t/a.py", 14, 1));
  EXPECT_EQ(requests(s.source("stats", "tiny")), 1u);
  const json::object second = s.source("stats", "second");
  EXPECT_EQ(requests(second), 2u);
  EXPECT_GT(second.at("promptTokens").as_int64(), 0);
  EXPECT_EQ(second.at("latencyMs").at("count").to_number<std::uint64_t>(), 2u);
  EXPECT_EQ(s.stop(), 0);
}

TEST_F(RoutingServed, ADownSourceFallsBackToTheNext) {
  served s;
  std::string error;
  ASSERT_TRUE(s.start(json::object{{"sources", json::array{json::object{{"name", "gone"}, {"kind", "local"},
                                                                        {"model", (dir_ / "missing.gguf").string()}},
                                                           json::object{{"name", "tiny"}, {"kind", "local"}, {"model", bundled}}}}},
                      &error))
      << error;
  const json::object gone = s.source("status", "gone");
  EXPECT_EQ(gone.at("state").as_string(), "down");
  EXPECT_NE(gone.at("lastError").as_string().find("missing.gguf"), std::string::npos) << json::serialize(gone);
  s.open("file:///t/b.py", "import os");
  auto r = s.complete("file:///t/b.py", 9, 2);
  ASSERT_TRUE(r);
  EXPECT_EQ(requests(s.source("stats", "tiny")), 1u);
  EXPECT_EQ(s.source("stats", "gone").at("skipped").at("down").to_number<std::uint64_t>(), 1u);
  bool told = false;
  for (const auto& m : s.messages) told = told || m.find("source \"gone\" is not available") != std::string::npos;
  EXPECT_TRUE(told);
  EXPECT_EQ(s.stop(), 0);
}

// A member out of range in one source (checked by the same validator as every
// setting) is an error naming its path; the routing in force (the implicit
// local source at start) keeps answering.
TEST_F(RoutingServed, ABadMemberOfASourceIsAnErrorAndTheServerKeepsAnswering) {
  served s;
  std::string error;
  json::array sources = two_sources();
  sources[1] = json::object{{"name", "gpu"}, {"kind", "openai"}, {"endpoints", json::array{"http://127.0.0.1:9"}},
                            {"maxTokens", 0}};
  ASSERT_TRUE(s.start(json::object{{"sources", sources}, {"routes", json::object{{"automatic", json::array{"gpu"}}}}},
                      &error))
      << error;
  bool told = false;
  for (const auto& m : s.messages)
    told = told || (m.find("sources[1].maxTokens: 0 is not accepted (expected an integer from 1 to 4096)") !=
                        std::string::npos &&
                    m.find("the routing in force is kept") != std::string::npos);
  EXPECT_TRUE(told);
  s.open("file:///t/e.py", "import os");
  ASSERT_TRUE(s.complete("file:///t/e.py", 9, 2));
  EXPECT_EQ(requests(s.source("stats", "local")), 1u) << "the implicit local source answers";
  EXPECT_TRUE(s.source("stats", "gpu").empty());
  EXPECT_EQ(s.stop(), 0);
}

TEST_F(RoutingServed, ARoutingChangeAtRunTimeTakesEffectAndABadOneIsRefused) {
  served s;
  std::string error;
  json::object settings{{"sources", two_sources()},
                        {"routes", json::object{{"automatic", json::array{"tiny"}}, {"explicit", json::array{"tiny"}}}},
                        {"routing", json::object{{"memoryReserveMiB", 0}}}};
  ASSERT_TRUE(s.start(settings, &error)) << error;
  s.open("file:///t/c.py", "x = 1");
  ASSERT_TRUE(s.complete("file:///t/c.py", 5, 1));
  EXPECT_EQ(requests(s.source("stats", "tiny")), 1u);
  // Explicit invocations now go to the second model.
  settings["routes"] = json::object{{"automatic", json::array{"tiny"}}, {"explicit", json::array{"second"}}};
  s.notify("workspace/didChangeConfiguration",
           json::object{{"settings", json::object{{"quickfill", served::editor(settings)}}}});
  ASSERT_TRUE(s.wait_loaded(&error)) << error;
  s.open("file:///t/d.py", "y = 2");
  ASSERT_TRUE(s.complete("file:///t/d.py", 5, 1));
  EXPECT_EQ(requests(s.source("stats", "second")), 1u);
  EXPECT_EQ(requests(s.source("stats", "tiny")), 1u) << "the meter of a source that stays is kept";
  // A route naming no source is an error: the routing in force stays.
  json::object bad = settings;
  bad["routes"] = json::object{{"explicit", json::array{"nobody"}}};
  s.notify("workspace/didChangeConfiguration", json::object{{"settings", json::object{{"quickfill", served::editor(bad)}}}});
  ASSERT_TRUE(s.wait_loaded(&error)) << error;
  ASSERT_TRUE(s.complete("file:///t/d.py", 5, 1));
  EXPECT_EQ(requests(s.source("stats", "second")), 2u);
  bool told = false;
  for (const auto& m : s.messages)
    told = told || (m.find("routes.explicit: no source is named \"nobody\"") != std::string::npos &&
                    m.find("the routing in force is kept") != std::string::npos);
  EXPECT_TRUE(told);
  EXPECT_EQ(s.stop(), 0);
}

TEST_F(RoutingServed, ASecondModelThatDoesNotFitInMemoryIsRefused) {
  served s;
  std::string error;
  // A reserve of 16 TiB: no machine has that much left, so the second model cannot fit.
  ASSERT_TRUE(s.start(json::object{{"sources", two_sources()}, {"routing", json::object{{"memoryReserveMiB", 1 << 24}}}},
                      &error))
      << error;
  EXPECT_EQ(s.source("status", "tiny").at("state").as_string(), "ok");
  const json::object second = s.source("status", "second");
  EXPECT_EQ(second.at("state").as_string(), "down");
  const std::string why(second.at("lastError").as_string());
  EXPECT_NE(why.find("source \"second\" was not loaded"), std::string::npos) << why;
  EXPECT_NE(why.find("MemAvailable"), std::string::npos) << why;
  bool told = false;
  for (const auto& m : s.messages) told = told || m.find("source \"second\" was not loaded") != std::string::npos;
  EXPECT_TRUE(told);
  // The model that fits still answers.
  s.open("file:///t/e.py", "def f():");
  ASSERT_TRUE(s.complete("file:///t/e.py", 8, 2));
  EXPECT_EQ(requests(s.source("stats", "tiny")), 1u);
  EXPECT_EQ(s.stop(), 0);
}

}  // namespace
}  // namespace qf::test
