// The dashboard page rendered from stats JSON (server/report/report_html.h):
// self-contained, one SVG per plot with the figures of the JSON, and a clear
// error for JSON that is not quickfill/stats output.
#include <gtest/gtest.h>

#include <boost/json.hpp>

#include "server/report/report_html.h"
#include "server/routing/source_board.h"
#include "server/core/stats.h"

using namespace qf::server;
namespace json = boost::json;

namespace {

json::value sample_stats() {
  stats_collector s;
  const auto now = stats_windows::clock::now();
  for (int i = 0; i < 6; ++i) {
    request_record r;
    r.inline_request = true;
    r.outcome = request_outcome::answered;
    r.wall_ms = 100.0 + 100 * i;
    r.slo_budget_ms = 500;
    r.metrics.ttft_ms = 40;
    r.metrics.total_ms = r.wall_ms;
    s.record(r, now);
  }
  json::value j = s.to_json(0, {}, now);
  j.as_object()["acceptance"] = json::object{{"bySource", json::object{}}};
  return j;
}

std::size_t occurrences(const std::string& s, const std::string& what) {
  std::size_t n = 0;
  for (std::size_t p = s.find(what); p != std::string::npos; p = s.find(what, p + 1)) ++n;
  return n;
}

}  // namespace

TEST(ReportHtml, IsOneSelfContainedPageWithThePlotsAndFigures) {
  std::string error;
  const std::string html = report::render_report_html(sample_stats(), &error);
  ASSERT_FALSE(html.empty()) << error;
  EXPECT_EQ(html.rfind("<!DOCTYPE html>", 0), 0u);
  EXPECT_EQ(html.find("<script"), std::string::npos);
  EXPECT_EQ(occurrences(html, "http:"), occurrences(html, "xmlns=\"http://www.w3.org/2000/svg\""));  // no links
  EXPECT_EQ(occurrences(html, "https:"), 0u);
  EXPECT_EQ(html.find("url("), std::string::npos);
  for (const char* id : {"plot-slo-burn", "plot-percentiles", "hist-inline-automatic-ttftMs",
                         "hist-inline-automatic-totalMs", "hist-inline-automatic-tokensPerSecond",
                         "hist-inline-automatic-cacheReuse"})
    EXPECT_NE(html.find(std::string("<svg id=\"") + id + "\""), std::string::npos) << id;
  // Only cells that saw requests get plots.
  EXPECT_EQ(html.find("hist-completion-explicit"), std::string::npos);
  // 6 judged: 100..500 ms within the 500 ms budget, 600 over it.
  EXPECT_NE(html.find("id=\"slo-hour-judged\" data-value=\"6.0000\">6<"), std::string::npos);
  EXPECT_NE(html.find("id=\"slo-hour-good\" data-value=\"5.0000\">5<"), std::string::npos);
  EXPECT_NE(html.find("id=\"slo-hour-compliance\" data-value=\"0.8333\">83.3 %<"), std::string::npos);
  // One bar per bucket of each histogram (4 histograms) plus one burn bar.
  EXPECT_EQ(occurrences(html, "<rect class=\"bar\""),
            2 * (latency_edges_ms().size() + 1) + tokens_per_second_edges().size() + 1 +
                cache_reuse_edges().size() + 1 + 1);
  EXPECT_NE(html.find("data-label=\"\xE2\x89\xA4" "750\" data-value=\"1\""), std::string::npos);
}

TEST(ReportHtml, NamesTheFirstBadMemberOfJsonThatIsNotStats) {
  std::string error;
  EXPECT_TRUE(report::render_report_html(json::parse("[1,2]"), &error).empty());
  EXPECT_EQ(error, "stats: expected an object");
  json::value j = sample_stats();
  j.as_object().erase("slo");
  EXPECT_TRUE(report::render_report_html(j, &error).empty());
  EXPECT_EQ(error, "stats.slo: missing");
  j = sample_stats();
  j.at("histograms").at("bySource").at("inline").at("automatic").as_object()["totalMs"].as_object()["counts"] = "x";
  EXPECT_TRUE(report::render_report_html(j, &error).empty());
  EXPECT_EQ(error, "stats.histograms.bySource.inline.automatic.totalMs.counts: expected an array");
}

TEST(ReportHtml, EscapesTextFromTheJson) {
  json::value j = sample_stats();
  j.as_object()["cancellations"] = json::object{{"<b>odd</b>", 2}};
  std::string error;
  const std::string html = report::render_report_html(j, &error);
  ASSERT_FALSE(html.empty()) << error;
  EXPECT_EQ(html.find("<b>odd"), std::string::npos);
  EXPECT_NE(html.find("&lt;b&gt;odd&lt;/b&gt;"), std::string::npos);
}

TEST(ReportHtml, ShowsEachCompletionSourcesMeter) {
  routing::source_board board;
  board.set_sources({{"cloud", "openai", false, {1000, 0}}, {"local", "local", true, {}}});
  routing::call_record ok;
  ok.latency_ms = 120;
  ok.prompt_tokens = 300;
  ok.completion_tokens = 20;
  board.record_call("cloud", ok);
  routing::call_record bad;
  bad.ok = false;
  bad.error = "endpoint down";
  board.record_call("cloud", bad);
  board.record_skip("cloud", routing::skip_reason::deadline);
  json::value j = sample_stats();
  j.as_object()["sources"] = board.stats_json();
  std::string error;
  const std::string html = report::render_report_html(j, &error);
  ASSERT_FALSE(html.empty()) << error;
  EXPECT_NE(html.find("<h2>Completion sources</h2>"), std::string::npos);
  EXPECT_NE(html.find("id=\"source-cloud-requests\" data-value=\"2.0000\">2<"), std::string::npos);
  EXPECT_NE(html.find("id=\"source-cloud-errors\" data-value=\"1.0000\">1<"), std::string::npos);
  EXPECT_NE(html.find("id=\"source-cloud-skipped\" data-value=\"1.0000\">1<"), std::string::npos);
  EXPECT_NE(html.find("id=\"source-cloud-promptTokens\" data-value=\"300.0000\">300<"), std::string::npos);
  EXPECT_NE(html.find("id=\"source-cloud-p50\" data-value=\"120.0000\">120.0<"), std::string::npos);
  EXPECT_NE(html.find("id=\"source-cloud-tokensLastHour\" data-value=\"320.0000\">320 / 1000<"), std::string::npos);
  EXPECT_NE(html.find("id=\"source-local-requests\" data-value=\"0.0000\">0<"), std::string::npos);
  j.as_object()["sources"].as_array()[0].as_object().erase("latencyMs");
  EXPECT_TRUE(report::render_report_html(j, &error).empty());
  EXPECT_EQ(error, "stats.sources[0].latencyMs: missing");
}

// Degradations under load (completion_metrics::degraded) are counted per kind
// in the stats and shown on the dashboard; a request's entry says what it got.
TEST(ReportHtml, CountsAndShowsEachDegradationUnderLoad) {
  stats_collector s;
  const auto now = stats_windows::clock::now();
  auto answered = [&](auto&& set) {
    request_record r;
    r.outcome = request_outcome::answered;
    r.items = 1;
    set(r.metrics.degraded);
    s.record(r, now);
  };
  answered([](degradation& d) {
    d.shortened = true;
    d.max_tokens = 8;
    d.candidates = 1;
    d.background_paused = 3;
  });
  answered([](degradation& d) {
    d.shortened = true;
    d.candidates_dropped = true;
  });
  answered([](degradation& d) { d.rerouted = true; });
  answered([](degradation&) {});
  request_record cancelled;  // a cancelled request's metrics are not counted
  cancelled.outcome = request_outcome::cancelled;
  cancelled.metrics.degraded.shortened = true;
  s.record(cancelled, now);
  json::value j = s.to_json(10, {}, now);
  EXPECT_EQ(json::serialize(j.at("degraded")),
            R"({"shortened":2,"candidatesDropped":1,"backgroundPaused":3,"rerouted":1})");
  const json::array& recent = j.at("recent").as_array();
  ASSERT_EQ(recent.size(), 5u);
  EXPECT_EQ(recent[0].at("degraded").at("maxTokens").as_int64(), 8);
  EXPECT_TRUE(recent[2].at("degraded").at("rerouted").as_bool());
  EXPECT_FALSE(recent[3].as_object().contains("degraded")) << "not degraded: no member";
  j.as_object()["acceptance"] = json::object{{"bySource", json::object{}}};
  std::string error;
  const std::string html = report::render_report_html(j, &error);
  ASSERT_FALSE(html.empty()) << error;
  EXPECT_NE(html.find("Degraded under load"), std::string::npos);
  EXPECT_NE(html.find("id=\"degraded-shortened\" data-value=\"2.0000\">2<"), std::string::npos);
  EXPECT_NE(html.find("id=\"degraded-candidatesDropped\" data-value=\"1.0000\">1<"), std::string::npos);
  EXPECT_NE(html.find("id=\"degraded-backgroundPaused\" data-value=\"3.0000\">3<"), std::string::npos);
  EXPECT_NE(html.find("id=\"degraded-rerouted\" data-value=\"1.0000\">1<"), std::string::npos);
}
