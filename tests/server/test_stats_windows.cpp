// The dashboard's bounded histograms and time windows, and the SLO's
// compliance over the last hour and day (server/core/stats_windows.h).
#include <gtest/gtest.h>

#include <boost/json.hpp>

#include "server/core/stats.h"

using namespace qf;
using namespace qf::server;
namespace json = boost::json;
using std::chrono::hours;
using std::chrono::minutes;

namespace {

request_record answered(bool inline_request, bool explicit_trigger, double wall_ms, double budget_ms = 500) {
  request_record r;
  r.inline_request = inline_request;
  r.explicit_trigger = explicit_trigger;
  r.outcome = request_outcome::answered;
  r.wall_ms = wall_ms;
  r.slo_budget_ms = budget_ms;
  r.metrics.ttft_ms = wall_ms / 2;
  r.metrics.total_ms = wall_ms;
  r.metrics.tokens_generated = 5;
  r.metrics.tpot_ms = 20;  // 50 tokens/s
  r.metrics.tokens_reused = 30;
  r.metrics.tokens_evaluated = 10;  // 0.75 from the cache
  return r;
}

const stats_windows::clock::time_point t0 = stats_windows::clock::time_point(hours(24 * 20000));

std::vector<std::uint64_t> counts(const json::value& h) {
  std::vector<std::uint64_t> out;
  for (const auto& c : h.at("counts").as_array()) out.push_back(c.to_number<std::uint64_t>());
  return out;
}

std::size_t index_of_edge(const std::vector<double>& edges, double e) {
  return static_cast<std::size_t>(std::find(edges.begin(), edges.end(), e) - edges.begin());
}

}  // namespace

TEST(StatsWindows, FixedHistogramBucketsAreUpperInclusiveWithAnOverflowBucket) {
  fixed_histogram h(&latency_edges_ms());
  h.add(10);     // (-inf, 10]
  h.add(10.5);   // (10, 25]
  h.add(99999);  // overflow
  const auto& c = h.counts();
  ASSERT_EQ(c.size(), latency_edges_ms().size() + 1);
  EXPECT_EQ(c[0], 1u);
  EXPECT_EQ(c[1], 1u);
  EXPECT_EQ(c.back(), 1u);
  EXPECT_EQ(h.total(), 3u);
  EXPECT_EQ(h.quantile_upper(0.34), 25);           // rank 2 is in (10, 25]
  EXPECT_EQ(h.quantile_upper(1.0), latency_edges_ms().back());
  fixed_histogram empty(&latency_edges_ms());
  EXPECT_EQ(empty.quantile_upper(0.5), 0);
}

TEST(StatsWindows, CellsPerSourceAndTriggerCountAndBucketTheirRequests) {
  stats_collector s;
  s.record(answered(true, false, 120), t0);
  s.record(answered(true, false, 180), t0);
  s.record(answered(false, true, 900), t0);
  request_record c;
  c.inline_request = true;
  c.outcome = request_outcome::cancelled;
  c.reason = cancel_reason::content_modified;
  s.record(c, t0);
  const json::value j = s.to_json(0, {}, t0);
  const json::value& ia = j.at("histograms").at("bySource").at("inline").at("automatic");
  EXPECT_EQ(ia.at("requests").to_number<int>(), 3);
  EXPECT_EQ(ia.at("answered").to_number<int>(), 2);
  EXPECT_EQ(ia.at("cancelled").to_number<int>(), 1);
  const auto& e = latency_edges_ms();
  const auto total = counts(ia.at("totalMs"));
  EXPECT_EQ(total[index_of_edge(e, 150)], 1u);  // 120 in (100, 150]
  EXPECT_EQ(total[index_of_edge(e, 200)], 1u);  // 180 in (150, 200]
  const auto ttft = counts(ia.at("ttftMs"));
  EXPECT_EQ(ttft[index_of_edge(e, 75)], 1u);    // 60
  EXPECT_EQ(ttft[index_of_edge(e, 100)], 1u);   // 90
  const auto tps = counts(ia.at("tokensPerSecond"));
  EXPECT_EQ(tps[index_of_edge(tokens_per_second_edges(), 50)], 2u);
  const auto reuse = counts(ia.at("cacheReuse"));
  EXPECT_EQ(reuse[index_of_edge(cache_reuse_edges(), 0.8)], 2u);  // 0.75 in (0.7, 0.8]
  const json::value& ce = j.at("histograms").at("bySource").at("completion").at("explicit");
  EXPECT_EQ(ce.at("answered").to_number<int>(), 1);
  EXPECT_EQ(counts(ce.at("totalMs"))[index_of_edge(e, 1000)], 1u);
  EXPECT_EQ(j.at("histograms").at("bySource").at("completion").at("automatic").at("requests").to_number<int>(), 0);
}

TEST(StatsWindows, SloComplianceCountsAutomaticAnswersOverTheLastHourAndDay) {
  stats_collector s;
  // Three hours ago: 2 of 4 within the budget; ten minutes ago: 9 of 10.
  for (int i = 0; i < 4; ++i) s.record(answered(true, false, i < 2 ? 100 : 800), t0 - hours(3));
  for (int i = 0; i < 10; ++i) s.record(answered(true, false, i < 9 ? 300 : 501), t0 - minutes(10));
  // Not judged: explicit requests and cancellations.
  s.record(answered(false, true, 5000), t0 - minutes(10));
  request_record c;
  c.outcome = request_outcome::cancelled;
  c.reason = cancel_reason::content_modified;
  s.record(c, t0 - minutes(10));
  const json::value slo = s.to_json(0, slo_options{500, 0.95}, t0).at("slo");
  EXPECT_EQ(slo.at("lastHour").at("judged").to_number<int>(), 10);
  EXPECT_EQ(slo.at("lastHour").at("good").to_number<int>(), 9);
  EXPECT_DOUBLE_EQ(slo.at("lastHour").at("compliance").to_number<double>(), 0.9);
  EXPECT_NEAR(slo.at("lastHour").at("burnRate").to_number<double>(), 2.0, 1e-9);  // 10 % bad over 5 % allowed
  EXPECT_EQ(slo.at("lastDay").at("judged").to_number<int>(), 14);
  EXPECT_EQ(slo.at("lastDay").at("good").to_number<int>(), 11);
  const json::array& slots = slo.at("slots").as_array();
  ASSERT_EQ(slots.size(), 2u);  // oldest first
  EXPECT_LT(slots[0].at("start").to_number<std::int64_t>(), slots[1].at("start").to_number<std::int64_t>());
  EXPECT_EQ(slots[1].at("requests").to_number<int>(), 12);
  EXPECT_EQ(slots[1].at("cancelled").to_number<int>(), 1);
  EXPECT_EQ(slots[1].at("p50Ms").to_number<double>(), 300);
  EXPECT_EQ(slots[1].at("p99Ms").to_number<double>(), 750);  // 501 in (500, 750]
  EXPECT_EQ(slots[0].at("p90Ms").to_number<double>(), 1000);  // 800 in (750, 1000]
  // Each record is judged against the budget it arrived with.
  stats_collector strict;
  strict.record(answered(true, false, 300, 200), t0);
  EXPECT_EQ(strict.to_json(0, {}, t0).at("slo").at("lastHour").at("good").to_number<int>(), 0);
}

TEST(StatsWindows, TheWindowsStayBoundedAndForgetWhatIsOlderThanADay) {
  stats_collector s;
  // Two days of one request a minute: the ring keeps one day of slots.
  for (int m = 2 * 24 * 60 - 1; m >= 0; --m) s.record(answered(false, false, 100), t0 - minutes(m));
  // A record from two days back (a clock stepped back) erases nothing newer.
  s.record(answered(false, false, 100), t0 - hours(48));
  const json::value slo = s.to_json(0, {}, t0).at("slo");
  EXPECT_EQ(slo.at("slots").as_array().size(), static_cast<std::size_t>(stats_windows::day_slots));
  // The windows are whole slots: the current one (t0 starts it, one record)
  // and the 11 (hour) or 287 (day) before it, five records each.
  EXPECT_EQ(slo.at("lastHour").at("judged").to_number<int>(), 1 + 11 * 5);
  EXPECT_EQ(slo.at("lastDay").at("judged").to_number<int>(), 1 + 287 * 5);
  // A day later nothing is left in the windows; the histograms keep counting.
  const json::value later = s.to_json(0, {}, t0 + hours(25));
  EXPECT_EQ(later.at("slo").at("slots").as_array().size(), 0u);
  EXPECT_EQ(later.at("slo").at("lastDay").at("judged").to_number<int>(), 0);
  EXPECT_DOUBLE_EQ(later.at("slo").at("lastDay").at("compliance").to_number<double>(), 1.0);
  EXPECT_EQ(later.at("histograms").at("bySource").at("completion").at("automatic").at("answered").to_number<int>(),
            2 * 24 * 60 + 1);
}
