// sources/routes/audit through the settings schema: defaults that keep the
// behaviour without routing, clear errors that keep the routing in force.
#include <gtest/gtest.h>

#include <boost/json.hpp>

#include "server/core/settings.h"

namespace qf::server {
namespace {

namespace json = boost::json;

parsed_settings parse(const char* text) { return parse_settings(json::parse(text)); }

std::string problems(const parsed_settings& p) {
  std::string out;
  for (const auto& q : p.problems) out += q.message + "\n";
  return out;
}

bool has_error(const parsed_settings& p, const std::string& part) {
  for (const auto& q : p.problems)
    if (q.level == settings_problem::severity::error && q.message.find(part) != std::string::npos) return true;
  return false;
}

TEST(RoutingSettings, DefaultsAreOneImplicitLocalSource) {
  parsed_settings p = parse(R"({"quickfill":{}})");
  EXPECT_TRUE(p.problems.empty()) << problems(p);
  EXPECT_TRUE(p.values.routing.sources.empty());
  EXPECT_EQ(p.values.routing.automatic, std::vector<std::string>{"local"});
  EXPECT_EQ(p.values.routing.explicit_route, std::vector<std::string>{"local"});
  EXPECT_FALSE(p.values.routing.keep_previous);
  EXPECT_TRUE(p.values.routing.audit_path.empty());
  EXPECT_FALSE(p.values.routing.audit_include_code);
}

TEST(RoutingSettings, SourcesAndRoutesAreRead) {
  parsed_settings p = parse(R"({"quickfill":{
      "sources":[{"name":"small","kind":"local","model":"a.gguf","threads":1,"quota":{"tokensPerHour":1000}},
                 {"name":"big","kind":"local","model":"b.gguf","device":"cpu"}],
      "routes":{"automatic":["small"],"explicit":["big","small"]},
      "audit":{"path":"/tmp/a.jsonl","includeCode":true}}})");
  EXPECT_TRUE(p.problems.empty()) << problems(p);
  ASSERT_EQ(p.values.routing.sources.size(), 2u);
  EXPECT_EQ(p.values.routing.sources[0].name, "small");
  EXPECT_EQ(p.values.routing.sources[0].quota.tokens_per_hour, 1000);
  EXPECT_EQ(p.values.routing.sources[0].quota.tokens_per_day, 0);
  EXPECT_EQ(p.values.routing.automatic, std::vector<std::string>{"small"});
  EXPECT_EQ(p.values.routing.explicit_route, (std::vector<std::string>{"big", "small"}));
  EXPECT_EQ(p.values.routing.audit_path, "/tmp/a.jsonl");
  EXPECT_TRUE(p.values.routing.audit_include_code);
}

TEST(RoutingSettings, BadValuesAreErrorsThatKeepTheRoutingInForce) {
  struct bad {
    const char* settings;
    const char* message;
  } cases[] = {
      {R"({"sources":5})", "sources: 5 is not accepted (expected an array of source objects)"},
      {R"({"sources":[{"kind":"local"}]})", "sources[0].name: missing (expected a non-empty string)"},
      {R"({"sources":[{"name":"a","kind":"gpt"}]})", "sources[0].kind: \"gpt\" is not accepted (expected one of \"local\", \"openai\", \"llama-infill\")"},
      {R"({"sources":[{"name":"a","kind":"local","colour":1}]})", "sources[0].colour: unknown member of a local source (known: model, device, threads)"},
      {R"({"sources":[{"name":"a","kind":"local","device":"tpu"}]})", "sources[0].device: \"tpu\" is not accepted (expected one of \"auto\", \"cpu\", \"cuda\")"},
      {R"({"sources":[{"name":"a","kind":"local"},{"name":"a","kind":"local"}]})", "sources[1].name: \"a\" is used by an earlier source"},
      {R"({"sources":[{"name":"a","kind":"local","quota":{"tokensPerHour":-1}}]})",
       "sources[0].quota.tokensPerHour: -1 is not accepted"},
      {R"({"sources":[{"name":"a","kind":"local"}],"routes":{"automatic":["b"]}})",
       "routes.automatic: no source is named \"b\""},
      {R"({"sources":[{"name":"a","kind":"local"}],"routes":{"automatic":[]}})", "routes.automatic: the route is empty"},
      {R"({"sources":[{"name":"a","kind":"local"}],"routes":{"sometimes":["a"]}})", "routes.sometimes: unknown member of the routes (known: automatic, explicit, underLoad)"},
      {R"({"routes":"a"})", "routes: \"a\" is not accepted"},
  };
  for (const bad& b : cases) {
    parsed_settings p = parse_settings(json::object{{"quickfill", json::parse(b.settings)}});
    EXPECT_TRUE(p.values.routing.keep_previous) << b.settings;
    EXPECT_TRUE(has_error(p, b.message)) << b.settings << "\n" << problems(p);
    EXPECT_TRUE(has_error(p, "the routing in force is kept")) << b.settings;
    EXPECT_TRUE(p.usable) << "the other settings still apply";
  }
}

// Every member of a source, of its quota and of the routes goes through the
// one settings validator: the message names the member's path, the routing in
// force is kept, and the other settings of the same payload still apply.
TEST(RoutingSettings, StructuredMembersAreCheckedByTheOneValidator) {
  struct bad {
    const char* remote;  // members of sources[1], an openai source
    const char* message;
  } cases[] = {
      {R"("maxTokens":0)", "sources[1].maxTokens: 0 is not accepted (expected an integer from 1 to 4096)"},
      {R"("maxTokens":5000)", "sources[1].maxTokens: 5000 is not accepted (expected an integer from 1 to 4096)"},
      {R"("retries":"two")", "sources[1].retries: \"two\" is not accepted (expected an integer from 0 to 5)"},
      {R"("temperature":3)", "sources[1].temperature: 3 is not accepted (expected a number from 0 to 2)"},
      {R"("streamUsage":"no")", "sources[1].streamUsage: \"no\" is not accepted (expected true or false)"},
      {R"("colour":1)", "sources[1].colour: unknown member of a remote source (known: endpoints, model, "},
      {R"("quota":{"tokensPerWeek":5})",
       "sources[1].quota.tokensPerWeek: unknown member of a quota (known: tokensPerHour, tokensPerDay)"},
      {R"("quota":5)", "sources[1].quota: 5 is not accepted (expected an object)"},
      {R"("stop":["\n",3])", "sources[1].stop[1]: 3 is not accepted (expected a non-empty string)"},
      {R"("endpoints":["ftp://x"])", "sources[1].endpoints[0]: not an http(s) URL"},
      {R"("fimTemplate":"nope")", "sources[1].fimTemplate: must be one of codegemma, qwen2.5-coder"},
      {R"("slots":2)", "sources[1].slots: applies to kind \"llama-infill\" only"},
  };
  for (const bad& b : cases) {
    const std::string settings =
        std::string(R"({"completion":{"maxTokens":20},"sources":[{"name":"here","kind":"local","threads":1},)") +
        R"({"name":"gpu","kind":"openai","endpoints":["http://127.0.0.1:8000"],)" + b.remote + "}]}";
    parsed_settings p = parse_settings(json::object{{"quickfill", json::parse(settings)}});
    EXPECT_TRUE(p.values.routing.keep_previous) << settings;
    EXPECT_TRUE(has_error(p, b.message)) << settings << "\n" << problems(p);
    EXPECT_TRUE(has_error(p, "the routing in force is kept")) << settings;
    EXPECT_TRUE(p.usable) << settings;
    EXPECT_EQ(p.values.completion.max_tokens_auto, 20) << "the other settings still apply: " << settings;
  }
  // A local source's members and the routes, the same way.
  struct bad_whole {
    const char* settings;
    const char* message;
  } more[] = {
      {R"({"sources":[{"name":"a","kind":"local","threads":999}]})",
       "sources[0].threads: 999 is not accepted (expected an integer from 0 to 256)"},
      {R"({"sources":[{"name":"a","kind":"local","model":5}]})", "sources[0].model: 5 is not accepted (expected a string)"},
      {R"({"sources":[{"name":"","kind":"local"}]})", "sources[0].name: \"\" is not accepted (expected a non-empty string)"},
      {R"({"sources":[7]})", "sources[0]: 7 is not accepted (expected an object)"},
      {R"({"sources":[{"name":"a","kind":"local"}],"routes":{"explicit":["a",1]}})",
       "routes.explicit[1]: 1 is not accepted (expected a non-empty string)"},
      {R"({"sources":[{"name":"a","kind":"local"}],"routes":{"explicit":["a","a"]}})",
       "routes.explicit: \"a\" is named twice"},
      {R"({"sources":[{"name":"a","kind":"local"}],"routes":{"automatic":["a"],"explicit":["gpu"]}})",
       "routes.explicit: no source is named \"gpu\""},
  };
  for (const bad_whole& b : more) {
    parsed_settings p = parse_settings(json::object{{"quickfill", json::parse(b.settings)}});
    EXPECT_TRUE(p.values.routing.keep_previous) << b.settings;
    EXPECT_TRUE(has_error(p, b.message)) << b.settings << "\n" << problems(p);
  }
}

// Validated values are read as the validator normalized them: integers
// written as 4.0, null members as absent, a quota's absent limits as 0.
TEST(RoutingSettings, ValidatedValuesAreRead) {
  parsed_settings p = parse(R"({"quickfill":{"sources":[
      {"name":"a","kind":"local","threads":2.0,"device":null,"quota":{"tokensPerDay":5000.0}},
      {"name":"gpu","kind":"llama-infill","endpoints":["http://127.0.0.1:8012/"],"maxTokens":24.0,"slots":null}]}})");
  EXPECT_TRUE(p.problems.empty()) << problems(p);
  ASSERT_EQ(p.values.routing.sources.size(), 2u);
  EXPECT_EQ(p.values.routing.sources[0].quota.tokens_per_day, 5000);
  EXPECT_EQ(p.values.routing.sources[0].quota.tokens_per_hour, 0);
  EXPECT_EQ(p.values.routing.automatic, (std::vector<std::string>{"a", "gpu"}));
}

TEST(RoutingSettings, TheReferenceDocumentsEveryMemberOfASource) {
  const std::string md = render_settings_markdown();
  for (const char* heading : {"### Sources and routes", "#### Every source", "#### `quota`", "#### Kind `local`",
                              "#### Kinds `openai`, `llama-infill`", "#### `routes`"})
    EXPECT_NE(md.find(heading), std::string::npos) << heading;
  // One default per setting: a remote source's maxTokens is the request's limit unless it sets one.
  EXPECT_NE(md.find("| `maxTokens` | integer | the request's limit | 1 to 4096 |"), std::string::npos) << md;
  EXPECT_NE(md.find("| `threads` | integer | `--threads` | 0 to 256 |"), std::string::npos);
  EXPECT_NE(md.find("| `endpoints` | array | required |"), std::string::npos);
  EXPECT_NE(md.find("`qwen` for `qwen2.5-coder`"), std::string::npos) << "the old fimTemplate names are documented";
}

TEST(RoutingSettings, TheReferenceDocumentsTheRoutingKeys) {
  const std::string md = render_settings_markdown();
  for (const char* key : {"`sources`", "`routes`", "`audit.path`", "`audit.includeCode`", "`routing.memoryReserveMiB`"})
    EXPECT_NE(md.find(key), std::string::npos) << key;
  EXPECT_NE(md.find("| `sources` | array | `[]` |"), std::string::npos);
  EXPECT_NE(md.find("| `routes` | object | `{}` |"), std::string::npos);
}

}  // namespace
}  // namespace qf::server
