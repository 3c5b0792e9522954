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
      {R"({"sources":[{"kind":"local"}]})", "sources[0].name: a source needs a non-empty name"},
      {R"({"sources":[{"name":"a","kind":"gpt"}]})", "sources[0] (\"a\").kind: \"gpt\" is not a known kind"},
      {R"({"sources":[{"name":"a","kind":"local","colour":1}]})", "unknown member \"colour\" of a local source"},
      {R"({"sources":[{"name":"a","kind":"local","device":"tpu"}]})", "device: expected one of"},
      {R"({"sources":[{"name":"a","kind":"local"},{"name":"a","kind":"local"}]})", "\"a\" is used by an earlier source"},
      {R"({"sources":[{"name":"a","kind":"local","quota":{"tokensPerHour":-1}}]})",
       "quota.tokensPerHour: -1 is not accepted"},
      {R"({"sources":[{"name":"a","kind":"local"}],"routes":{"automatic":["b"]}})",
       "routes.automatic: no source is named \"b\""},
      {R"({"sources":[{"name":"a","kind":"local"}],"routes":{"automatic":[]}})", "routes.automatic: the route is empty"},
      {R"({"sources":[{"name":"a","kind":"local"}],"routes":{"sometimes":["a"]}})", "routes.sometimes: unknown route"},
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

TEST(RoutingSettings, TheReferenceDocumentsTheRoutingKeys) {
  const std::string md = render_settings_markdown();
  for (const char* key : {"`sources`", "`routes`", "`audit.path`", "`audit.includeCode`", "`routing.memoryReserveMiB`"})
    EXPECT_NE(md.find(key), std::string::npos) << key;
  EXPECT_NE(md.find("| `sources` | array | `[]` |"), std::string::npos);
  EXPECT_NE(md.find("| `routes` | object | `{}` |"), std::string::npos);
}

}  // namespace
}  // namespace qf::server
