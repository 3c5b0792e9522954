// Acceptance counters (server/core/acceptance_stats.h): per source and trigger,
// partial acceptance, ids counted once, the bound on remembered ids.
#include <gtest/gtest.h>

#include <boost/json.hpp>

#include "server/core/acceptance_stats.h"

using qf::server::acceptance_stats;
namespace json = boost::json;

namespace {

const json::object& counts(const json::value& v, const char* source, const char* trigger) {
  return v.at("bySource").at(source).at(trigger).as_object();
}

}  // namespace

TEST(acceptance_stats, counts_per_source_and_trigger_with_partial_acceptance) {
  acceptance_stats a;
  std::string why;
  ASSERT_TRUE(a.shown("c1", "completion", "automatic", 10, &why));
  ASSERT_TRUE(a.shown("c2", "completion", "automatic", 6, &why));
  ASSERT_TRUE(a.shown("n1", "nextEdit", "explicit", 4, &why));
  a.accepted("c1", 10);
  a.accepted("c2", 2);
  a.accepted("c2", 6);   // a second acceptance of the same id changes nothing
  a.accepted("n1", 99);  // clamped to what was shown
  const json::value v = a.to_json();
  const json::object& c = counts(v, "completion", "automatic");
  EXPECT_EQ(c.at("shown").as_uint64(), 2u);
  EXPECT_EQ(c.at("accepted").as_uint64(), 2u);
  EXPECT_EQ(c.at("partlyAccepted").as_uint64(), 1u);
  EXPECT_EQ(c.at("acceptedChars").as_int64(), 12);
  EXPECT_DOUBLE_EQ(c.at("acceptanceRate").as_double(), 1.0);
  const json::object& n = counts(v, "nextEdit", "explicit");
  EXPECT_EQ(n.at("acceptedChars").as_int64(), 4);
  EXPECT_EQ(n.at("partlyAccepted").as_uint64(), 0u);
  EXPECT_EQ(v.at("total").at("shown").as_uint64(), 3u);
  EXPECT_EQ(v.at("total").at("shownChars").as_int64(), 20);
  EXPECT_EQ(counts(v, "inline", "explicit").at("shown").as_uint64(), 0u);
}

TEST(acceptance_stats, bad_sources_unknown_ids_and_the_bound) {
  acceptance_stats a(2);
  std::string why;
  EXPECT_FALSE(a.shown("x", "popup", "automatic", 1, &why));
  EXPECT_NE(why.find("params.source"), std::string::npos);
  EXPECT_FALSE(a.shown("x", "inline", "sometimes", 1, &why));
  EXPECT_NE(why.find("params.trigger"), std::string::npos);
  ASSERT_TRUE(a.shown("a", "inline", "automatic", 3, &why));
  ASSERT_TRUE(a.shown("a", "inline", "automatic", 3, &why));  // shown again: once
  ASSERT_TRUE(a.shown("b", "inline", "automatic", 3, &why));
  ASSERT_TRUE(a.shown("c", "inline", "automatic", 3, &why));  // "a" is forgotten
  a.accepted("a", 3);
  a.accepted("zz", 1);
  a.accepted("c", 0);  // nothing taken: not accepted
  const json::value v = a.to_json();
  EXPECT_EQ(v.at("unmatchedAccepts").as_uint64(), 2u);
  EXPECT_EQ(counts(v, "inline", "automatic").at("shown").as_uint64(), 3u);
  EXPECT_EQ(counts(v, "inline", "automatic").at("accepted").as_uint64(), 0u);
}
