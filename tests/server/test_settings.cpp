// The settings schema: one parser for every key (types, ranges, allowed
// values, nested and flat forms), the bad-value rule (default + a warning
// naming key, value and what is accepted), removed keys meaning their
// defaults through the server core, the typed sections each layer receives,
// --device on the command line, and docs/configuration.md matching the schema.
#include <gtest/gtest.h>

#include <boost/json.hpp>

#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "server/core/server_args.h"
#include "server/core/server_core.h"
#include "server/core/settings.h"

using namespace qf::server;
namespace json = boost::json;

namespace {

parsed_settings parse(const char* text) { return parse_settings(json::parse(text)); }

std::vector<std::string> messages(const parsed_settings& p) {
  std::vector<std::string> out;
  for (const auto& x : p.problems) out.push_back(x.message);
  return out;
}

bool has(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

}  // namespace

TEST(SettingsSchema, KeysAreUniqueAndDefaultsAreAccepted) {
  std::set<std::string_view> keys;
  for (const setting_spec& s : settings_schema()) {
    EXPECT_TRUE(keys.insert(s.key).second) << s.key;
    EXPECT_FALSE(s.doc.empty()) << s.key;
    EXPECT_EQ(s.doc.find('\n'), std::string_view::npos) << s.key;
    // Each default, sent back explicitly, is accepted without a warning.
    const std::string one = "{\"" + std::string(s.key) + "\":" + s.default_json() + "}";
    const parsed_settings p = parse(one.c_str());
    EXPECT_TRUE(p.problems.empty()) << one << ": " << (p.problems.empty() ? "" : p.problems[0].message);
  }
  EXPECT_GE(keys.size(), 29u);
}

TEST(SettingsSchema, CompletionKeysNestedAndFlat) {
  const parsed_settings p = parse(
      R"({"completion": {"prefixTokens": 100, "stopRules": false, "promptShare": 0.5}, "completion.maxTokens": 7})");
  EXPECT_TRUE(p.problems.empty());
  EXPECT_EQ(p.values.completion.prefix_tokens, 100);
  EXPECT_FALSE(p.values.completion.stop_rules);
  EXPECT_DOUBLE_EQ(p.values.completion.prompt_share, 0.5);
  EXPECT_EQ(p.values.completion.max_tokens_auto, 7);
  EXPECT_EQ(parse(R"({"quickfill": {"completion": {"cacheSlots": 2}}})").values.completion.cache_slots, 2);
  // Both forms of one key: the nested one wins, in either order.
  EXPECT_EQ(parse(R"({"completion.maxTokens": 5, "completion": {"maxTokens": 9}})").values.completion.max_tokens_auto, 9);
  EXPECT_EQ(parse(R"({"completion": {"maxTokens": 9}, "completion.maxTokens": 5})").values.completion.max_tokens_auto, 9);
}

TEST(SettingsSchema, BadValuesTakeTheDefaultWithAWarningNamingKeyValueAndRange) {
  const parsed_settings p =
      parse(R"({"completion": {"maxTokens": "many", "cacheSlots": 0, "speculative": 1, "promptShare": 2}})");
  const completion::completion_settings d;
  EXPECT_EQ(p.values.completion.max_tokens_auto, d.max_tokens_auto);
  EXPECT_EQ(p.values.completion.cache_slots, d.cache_slots);
  EXPECT_EQ(p.values.completion.speculative, d.speculative);
  EXPECT_DOUBLE_EQ(p.values.completion.prompt_share, d.prompt_share);
  const std::vector<std::string> w = messages(p);
  ASSERT_EQ(w.size(), 4u);
  for (const auto& x : p.problems) EXPECT_EQ(x.level, settings_problem::severity::warning);
  EXPECT_EQ(w[0], "completion.maxTokens: \"many\" is not accepted (expected an integer from 1 to 4096); using the "
                  "default 32");
  EXPECT_EQ(w[1], "completion.promptShare: 2 is not accepted (expected a number from 0.05 to 1); using the default 0.6");
  EXPECT_EQ(w[2], "completion.speculative: 1 is not accepted (expected true or false); using the default true");
  EXPECT_EQ(w[3], "completion.cacheSlots: 0 is not accepted (expected an integer from 1 to 64); using the default 3");
  // The same rule for the server's own keys (they used to keep the previous value).
  const parsed_settings s = parse(R"({"model": 5, "completion": {"autoDeadlineMs": -1}})");
  EXPECT_EQ(s.values.server.model, "");
  EXPECT_EQ(s.values.server.auto_deadline_ms, 400);
  ASSERT_EQ(s.problems.size(), 2u);
  EXPECT_TRUE(has(s.problems[0].message, "model: 5 is not accepted (expected a string)"));
  EXPECT_TRUE(has(s.problems[1].message, "completion.autoDeadlineMs: -1 is not accepted"));
  EXPECT_TRUE(has(s.problems[1].message, "from 1 to 600000"));
}

TEST(SettingsSchema, IntegersMayComeAsWholeDoubles) {
  EXPECT_EQ(parse(R"({"completion": {"maxTokens": 24.0}})").values.completion.max_tokens_auto, 24);
  const parsed_settings p = parse(R"({"completion": {"maxTokens": 24.5}})");
  EXPECT_EQ(p.values.completion.max_tokens_auto, 32);
  EXPECT_EQ(p.problems.size(), 1u);
}

TEST(SettingsSchema, DeviceGoesToTheEngineSection) {
  EXPECT_EQ(parse("{}").values.engine.device, "auto");
  EXPECT_EQ(parse(R"({"device":"cpu"})").values.engine.device, "cpu");
  EXPECT_EQ(parse(R"({"quickfill":{"device":"cuda"}})").values.engine.device, "cuda");
  const parsed_settings tpu = parse(R"({"device":"tpu"})");
  EXPECT_EQ(tpu.values.engine.device, "auto");
  ASSERT_EQ(tpu.problems.size(), 1u);
  EXPECT_EQ(tpu.problems[0].message,
            "device: \"tpu\" is not accepted (expected one of \"auto\", \"cpu\", \"cuda\"); using the default \"auto\"");
  const parsed_settings seven = parse(R"({"device":7})");
  EXPECT_EQ(seven.values.engine.device, "auto");
  EXPECT_EQ(seven.problems.size(), 1u);
}

TEST(SettingsSchema, NullAndAbsentMeanTheDefault) {
  const parsed_settings p = parse(R"({"model": null, "completion": {"maxTokens": null}})");
  EXPECT_TRUE(p.problems.empty());
  EXPECT_EQ(p.values.server.model, "");
  EXPECT_EQ(p.values.completion.max_tokens_auto, 32);
  // An empty array stands for an empty object (Lua encoders cannot tell them apart).
  const parsed_settings a = parse(R"({"quickfill": [], "x": 1})");
  EXPECT_TRUE(a.usable);
  EXPECT_TRUE(a.problems.empty());
  EXPECT_TRUE(parse(R"({"completion": []})").problems.empty());
}

TEST(SettingsSchema, UnknownKeysAndNonObjectGroupsAreReported) {
  const parsed_settings p = parse(R"({"completion": {"maxTokes": 4}, "cache": {"budgetMiB": 1}})");
  const std::vector<std::string> w = messages(p);
  ASSERT_EQ(w.size(), 2u);
  EXPECT_EQ(w[0], "unknown setting completion.maxTokes (ignored)");
  EXPECT_EQ(w[1], "unknown setting cache (ignored)");
  const parsed_settings g = parse(R"({"completion": 5})");
  ASSERT_EQ(g.problems.size(), 1u);
  EXPECT_TRUE(has(g.problems[0].message, "completion: 5 is not an object"));
  EXPECT_TRUE(g.usable);
  // Long values and keys are cut in messages, at a character boundary.
  const parsed_settings l = parse_settings(json::parse("{\"" + std::string(200, 'k') + "\": 1}"));
  ASSERT_EQ(l.problems.size(), 1u);
  EXPECT_LT(l.problems[0].message.size(), 120u);
  std::string accents;
  for (int i = 0; i < 10; ++i) accents += "\xC3\xA9";  // U+00E9, two bytes each
  for (int pad = 55; pad < 65; ++pad) {  // the cut falls in every position of a character
    const parsed_settings u =
        parse_settings(json::parse("{\"device\": \"" + std::string(pad, 'x') + accents + "\"}"));
    ASSERT_EQ(u.problems.size(), 1u);
    boost::system::error_code ec;
    json::parse(json::serialize(json::value(u.problems[0].message)), ec);  // parse rejects invalid UTF-8
    EXPECT_FALSE(ec) << pad;
  }
}

TEST(SettingsSchema, ANonObjectSettingsPayloadIsAnErrorAndChangesNothing) {
  const parsed_settings p = parse(R"({"quickfill": "fast"})");
  EXPECT_FALSE(p.usable);
  ASSERT_EQ(p.problems.size(), 1u);
  EXPECT_EQ(p.problems[0].level, settings_problem::severity::error);
  EXPECT_TRUE(has(p.problems[0].message, "\"fast\""));
  EXPECT_FALSE(has_settings(json::value(nullptr)));
  EXPECT_TRUE(has_settings(json::parse(R"({"quickfill": "fast"})")));
  EXPECT_TRUE(has_settings(json::value(5)));
}

TEST(SettingsSchema, PayloadsWithoutQuickfillSettingsChangeNothing) {
  EXPECT_FALSE(has_settings(json::object{}));              // eglot's didChangeConfiguration on connect
  EXPECT_FALSE(has_settings(json::parse(R"({"pylsp": {"plugins": {}}})")));  // another server's section
  EXPECT_FALSE(has_settings(json::array{}));
  EXPECT_TRUE(has_settings(json::parse(R"({"quickfill": {}})")));  // all defaults
  EXPECT_TRUE(has_settings(json::parse(R"({"quickfill": null})")));
  EXPECT_TRUE(has_settings(json::parse(R"({"model": "/m.gguf"})")));  // the bare form
  EXPECT_TRUE(has_settings(json::parse(R"({"completion": {}})")));
  EXPECT_TRUE(has_settings(json::parse(R"({"completion.maxTokens": 3, "other": 1})")));
}

TEST(SettingsCore, RemovedKeysGoBackToTheirDefaults) {
  core_options o;
  server_core core(std::move(o), [](std::function<void()> fn) { fn(); });
  EXPECT_TRUE(core.apply_settings(parse(R"({"model": "/a.gguf", "completion": {"autoDeadlineMs": 250}})").values));
  EXPECT_EQ(core.settings().model, "/a.gguf");
  EXPECT_EQ(core.settings().auto_deadline_ms, 250);
  // The same settings again: the model path did not change.
  EXPECT_FALSE(core.apply_settings(parse(R"({"model": "/a.gguf", "completion": {"autoDeadlineMs": 250}})").values));
  // A bad value now means the default, not the previous 250.
  EXPECT_FALSE(core.apply_settings(parse(R"({"model": "/a.gguf", "completion": {"autoDeadlineMs": "soon"}})").values));
  EXPECT_EQ(core.settings().auto_deadline_ms, 400);
  // Settings without the model: back to the default model lookup, which is a change (reload).
  EXPECT_TRUE(core.apply_settings(parse("{}").values));
  EXPECT_EQ(core.settings().model, "");
  EXPECT_EQ(core.settings().auto_deadline_ms, 400);
}

TEST(SettingsCore, CommandLineWinsForModelAndDevice) {
  core_options o;
  o.cli_model_path = "/cli.gguf";
  o.cli_device = "cpu";
  o.n_threads = 3;
  o.step_graphs = false;
  server_core core(std::move(o), [](std::function<void()> fn) { fn(); });
  EXPECT_FALSE(core.apply_settings(parse(R"({"model": "/setting.gguf", "device": "cuda"})").values));
  const completion::engine_options e = core.engine_options();
  EXPECT_EQ(e.device, "cpu");
  EXPECT_EQ(e.threads, 3);
  EXPECT_FALSE(e.step_graphs);

  server_core plain(core_options{}, [](std::function<void()> fn) { fn(); });
  plain.apply_settings(parse(R"({"device": "cuda"})").values);
  EXPECT_EQ(plain.engine_options().device, "cuda");
  EXPECT_TRUE(plain.engine_options().step_graphs);
  plain.apply_settings(parse("{}").values);
  EXPECT_EQ(plain.engine_options().device, "auto");
}

TEST(SettingsEnvironment, StepGraphsOffOnlyWithZero) {
  const char* old = std::getenv("QUICKFILL_STEP_GRAPHS");
  const std::string saved = old ? old : "";
  unsetenv("QUICKFILL_STEP_GRAPHS");
  EXPECT_TRUE(step_graphs_from_environment());
  setenv("QUICKFILL_STEP_GRAPHS", "0", 1);
  EXPECT_FALSE(step_graphs_from_environment());
  setenv("QUICKFILL_STEP_GRAPHS", "1", 1);
  EXPECT_TRUE(step_graphs_from_environment());
  if (old)
    setenv("QUICKFILL_STEP_GRAPHS", saved.c_str(), 1);
  else
    unsetenv("QUICKFILL_STEP_GRAPHS");
}

TEST(ServerArgs, DeviceModelAndThreads) {
  auto run = [](std::vector<std::string> a, qf::server::server_args& out, std::string* err) {
    std::vector<char*> argv;
    for (auto& s : a) argv.push_back(s.data());
    return qf::server::parse_server_args(std::span<char*>(argv), out, err);
  };
  std::string err;
  qf::server::server_args a;
  ASSERT_TRUE(run({"--stdio", "--device", "cpu", "--model", "/m.gguf", "--threads", "2"}, a, &err)) << err;
  EXPECT_EQ(a.device, "cpu");
  EXPECT_EQ(a.model_path, "/m.gguf");
  EXPECT_EQ(a.threads, 2);
  qf::server::server_args b;
  ASSERT_TRUE(run({"--device=cuda"}, b, &err)) << err;
  EXPECT_EQ(b.device, "cuda");
  qf::server::server_args c;
  EXPECT_TRUE(run({}, c, &err));
  EXPECT_EQ(c.device, "");  // the setting decides
  qf::server::server_args d;
  EXPECT_FALSE(run({"--device", "tpu"}, d, &err));
  EXPECT_TRUE(has(err, "--device")) << err;
  EXPECT_TRUE(has(err, "tpu")) << err;
  EXPECT_FALSE(run({"--device"}, d, &err));
  EXPECT_TRUE(has(qf::server::server_usage(), "--device auto|cpu|cuda"));
}

// docs/configuration.md holds the reference rendered from the schema; this
// fails whenever a key, type, default, range or doc line differs.
TEST(SettingsDocs, ConfigurationMdMatchesTheSchema) {
  const std::string path = std::string(QUICKFILL_SOURCE_DIR) + "/docs/configuration.md";
  std::ifstream in(path, std::ios::binary);
  ASSERT_TRUE(in) << "cannot read " << path;
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string doc = ss.str();
  const std::size_t b = doc.find(settings_doc_begin);
  ASSERT_NE(b, std::string::npos) << path << " has no settings reference marker";
  const std::size_t e = doc.find(settings_doc_end, b);
  ASSERT_NE(e, std::string::npos) << path << " has no end-of-reference marker";
  std::size_t end = e + settings_doc_end.size();
  if (end < doc.size() && doc[end] == '\n') ++end;
  const std::string rendered = render_settings_markdown();
  EXPECT_EQ(doc.substr(b, end - b), rendered)
      << "docs/configuration.md and the settings schema disagree; regenerate the reference with\n"
         "  build/server/quickfill settings --markdown --update docs/configuration.md";
  for (const setting_spec& s : settings_schema())
    EXPECT_TRUE(has(rendered, "| `" + std::string(s.key) + "` |")) << s.key;
}
