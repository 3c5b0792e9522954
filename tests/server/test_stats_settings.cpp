// Stats aggregation (percentiles, cache hit rate, cancellations) and the
// reading of the quickfill settings object (more in test_settings.cpp).
#include <gtest/gtest.h>

#include <boost/json.hpp>

#include "server/core/settings.h"
#include "server/core/stats.h"

using namespace qf;
using namespace qf::server;
namespace json = boost::json;

TEST(Stats, PercentilesAreNearestRank) {
  std::vector<double> v;
  for (int i = 1; i <= 100; ++i) v.push_back(101 - i);
  percentiles p = compute_percentiles(v);
  EXPECT_EQ(p.count, 100u);
  EXPECT_EQ(p.p50, 50);
  EXPECT_EQ(p.p90, 90);
  EXPECT_EQ(p.p99, 99);
  EXPECT_EQ(p.max, 100);
  EXPECT_EQ(compute_percentiles({}).count, 0u);
  EXPECT_EQ(compute_percentiles({7}).p99, 7);
}

TEST(Stats, AggregatesAnsweredAndCancelled) {
  stats_collector s;
  for (int i = 0; i < 4; ++i) {
    request_record r;
    r.uri = "u";
    r.outcome = request_outcome::answered;
    r.metrics.ttft_ms = 10.0 * (i + 1);
    r.metrics.total_ms = 20.0 * (i + 1);
    r.metrics.cache_hit = i % 2 == 0;
    s.record(r);
  }
  request_record c;
  c.outcome = request_outcome::cancelled;
  c.reason = cancel_reason::content_modified;
  s.record(c);
  s.record(c);
  request_record n;
  n.outcome = request_outcome::no_model;
  s.record(n);
  s.record_cancel_to_free(cancel_reason::content_modified, 3.5);
  json::value j = s.to_json(2);
  EXPECT_EQ(j.at("requests").to_number<int>(), 7);
  EXPECT_EQ(j.at("answered").to_number<int>(), 4);
  EXPECT_EQ(j.at("noModel").to_number<int>(), 1);
  EXPECT_DOUBLE_EQ(j.at("cacheHitRate").as_double(), 0.5);
  EXPECT_EQ(j.at("ttftMs").at("p50").as_double(), 20.0);
  EXPECT_EQ(j.at("totalMs").at("max").as_double(), 80.0);
  EXPECT_EQ(j.at("cancellations").at("content_modified").to_number<int>(), 2);
  EXPECT_EQ(j.at("cancelToFreeMs").at("p50").as_double(), 3.5);
  ASSERT_EQ(j.at("recent").as_array().size(), 2u);
  EXPECT_EQ(j.at("recent").at(1).at("outcome"), json::value("no_model"));
  EXPECT_EQ(j.at("recent").at(0).at("reason"), json::value("content_modified"));
}

TEST(Settings, SelectsNestedOrBareObject) {
  const parsed_settings nested = parse_settings(json::parse(R"({"quickfill":{"model":"/m.gguf"},"other":1})"));
  EXPECT_EQ(nested.values.server.model, "/m.gguf");
  EXPECT_TRUE(nested.problems.empty());  // members beside "quickfill" belong to others
  const parsed_settings bare = parse_settings(json::parse(R"({"model":"/n.gguf"})"));
  EXPECT_EQ(bare.values.server.model, "/n.gguf");
  EXPECT_FALSE(has_settings(json::value(nullptr)));
  const parsed_settings bad = parse_settings(json::value(3));
  EXPECT_FALSE(bad.usable);
  ASSERT_EQ(bad.problems.size(), 1u);
  EXPECT_EQ(bad.problems[0].level, settings_problem::severity::error);
}

TEST(Settings, ParsesDeadlinesAndUsesDefaultsForBadValues) {
  const parsed_settings p =
      parse_settings(json::parse(R"({"model":"/x.gguf","completion":{"autoDeadlineMs":250,"explicitDeadlineMs":"soon"}})"));
  EXPECT_EQ(p.values.server.model, "/x.gguf");
  EXPECT_EQ(p.values.server.auto_deadline_ms, 250);
  EXPECT_EQ(p.values.server.explicit_deadline_ms, 2000);
  ASSERT_EQ(p.problems.size(), 1u);
  EXPECT_EQ(p.problems[0].level, settings_problem::severity::warning);
  EXPECT_NE(p.problems[0].message.find("completion.explicitDeadlineMs"), std::string::npos);
  EXPECT_TRUE(p.usable);
}

TEST(Settings, AcceptsFlatKeys) {
  const parsed_settings p =
      parse_settings(json::parse(R"({"completion.autoDeadlineMs":75,"completion.contextDocuments":2})"));
  EXPECT_EQ(p.values.server.auto_deadline_ms, 75);
  EXPECT_EQ(p.values.server.context_documents, 2);
  EXPECT_TRUE(p.problems.empty());
}
