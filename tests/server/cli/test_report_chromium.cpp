// The dashboard end to end: the real server answers completions on the
// bundled model, its quickfill/stats JSON goes through `quickfill report`,
// and headless Chromium renders the page. The rendered DOM must hold every
// plot, one bar per histogram bucket with the counts of the JSON, and the
// SLO figures of the JSON; the server's own quickfill/report page must hold
// the same plots. Skips when /usr/bin/chromium or the bundled model is absent.
#include <gtest/gtest.h>

#include <filesystem>
#include <regex>
#include <set>

#include "tests/server/cli/served_model.h"
#include "tests/server/cli/tool_runner.h"

namespace qf::test {
namespace {

namespace fs = std::filesystem;

const char* k_chromium = "/usr/bin/chromium";

// The DOM Chromium built from the page (--dump-dom), "" on failure.
std::string rendered_dom(const std::string& html_path, const std::string& dir, std::string* err) {
  run_result r = run_process({"/usr/bin/timeout", "120", k_chromium, "--headless", "--no-sandbox", "--disable-gpu",
                              "--user-data-dir=" + dir + "/chromium-profile", "--dump-dom", "file://" + html_path});
  *err = r.err;
  return r.exit_code == 0 ? r.out : std::string();
}

// The text of the element <svg id="ID" ...>...</svg> in the DOM, "" when absent.
std::string svg_by_id(const std::string& dom, const std::string& id) {
  const std::size_t b = dom.find("<svg id=\"" + id + "\"");
  if (b == std::string::npos) return {};
  const std::size_t e = dom.find("</svg>", b);
  return e == std::string::npos ? std::string() : dom.substr(b, e - b);
}

std::vector<std::string> bar_values(const std::string& svg) {
  static const std::regex bar("<rect class=\"bar\"[^>]* data-value=\"([^\"]*)\"");
  std::vector<std::string> out;
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), bar); it != std::sregex_iterator(); ++it)
    out.push_back((*it)[1]);
  return out;
}

std::string cell_text(const std::string& dom, const std::string& id) {
  const std::regex cell("<td id=\"" + id + "\" data-value=\"[^\"]*\">([^<]*)</td>");
  std::smatch m;
  return std::regex_search(dom, m, cell) ? m[1].str() : "<absent>";
}

std::string integer(const json::value& v) { return std::to_string(v.to_number<std::int64_t>()); }

TEST(ReportChromium, TheRenderedPageShowsThePlotsAndNumbersOfALiveServersStats) {
  if (!fs::exists(k_chromium)) GTEST_SKIP() << k_chromium << " is absent (scripts/setup-tests.sh installs chromium)";
  const std::string model = source_dir() + "/models/quickfill-tiny-code.gguf";
  if (!fs::exists(model)) GTEST_SKIP() << "bundled model absent: " << model;
  const std::string dir = scratch_dir("report_chromium");
  served_model s;
  std::string error;
  ASSERT_TRUE(s.start(model, dir + "/server.log", &error, json::object{{"maxTokens", 8}, {"maxTokensExplicit", 8}}))
      << error;
  const std::string text = "import os\n\n\ndef list_python_files(root):\n    ";
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(s.complete_list("file:///work/a" + std::to_string(i) + ".py", text));
  for (int i = 0; i < 4; ++i) {
    const std::string t = text + std::string(static_cast<std::size_t>(i), 'x');
    s.notify("textDocument/didChange",
           json::object{{"textDocument", json::object{{"uri", "file:///work/a0.py"}, {"version", 2 + i}}},
                        {"contentChanges", json::array{json::object{{"text", t}}}}});
    ASSERT_TRUE(s.call("textDocument/inlineCompletion",
                       json::object{{"textDocument", json::object{{"uri", "file:///work/a0.py"}}},
                                    {"position", json::object{{"line", 4}, {"character", 4 + i}}},
                                    {"context", json::object{{"triggerKind", 2}}}}));
  }
  auto stats = s.call("quickfill/stats", json::object{{"recent", 0}});
  ASSERT_TRUE(stats.has_value());
  auto served = s.call("quickfill/report", nullptr);
  ASSERT_TRUE(served.has_value());
  EXPECT_EQ(s.stop(), 0);

  const std::string stats_path = dir + "/stats.json", html_path = dir + "/report.html";
  write_file(stats_path, json::serialize(*stats));
  run_result r = run_quickfill({"report", "--from-stats", stats_path, "--out", html_path});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::string chromium_err;
  const std::string dom = rendered_dom(html_path, dir, &chromium_err);
  ASSERT_FALSE(dom.empty()) << "chromium failed: " << chromium_err;
  const std::string served_html(served->at("html").as_string());

  // Every cell that saw requests has its four histograms, bar for bar.
  std::size_t cells = 0;
  for (const auto& [source, triggers] : stats->at("histograms").at("bySource").as_object()) {
    for (const auto& [trigger, c] : triggers.as_object()) {
      if (c.at("requests").to_number<std::int64_t>() == 0) continue;
      ++cells;
      const std::string id = std::string(source) + "-" + std::string(trigger);
      EXPECT_EQ(cell_text(dom, id + "-requests"), integer(c.at("requests")));
      EXPECT_EQ(cell_text(dom, id + "-answered"), integer(c.at("answered")));
      for (const char* key : {"ttftMs", "totalMs", "tokensPerSecond", "cacheReuse"}) {
        const std::string svg_id = "hist-" + id + "-" + key;
        const std::string svg = svg_by_id(dom, svg_id);
        ASSERT_FALSE(svg.empty()) << svg_id << " is not in the rendered DOM";
        std::vector<std::string> want;
        for (const auto& n : c.at(key).at("counts").as_array()) want.push_back(integer(n));
        EXPECT_EQ(bar_values(svg), want) << svg_id;
        EXPECT_NE(served_html.find("<svg id=\"" + svg_id + "\""), std::string::npos) << svg_id;
      }
    }
  }
  EXPECT_EQ(cells, 2u) << "explicit completion lists and automatic inline completions";

  // The SLO figures and one burn bar per time slot.
  const json::value& slo = stats->at("slo");
  EXPECT_EQ(cell_text(dom, "slo-hour-judged"), integer(slo.at("lastHour").at("judged")));
  EXPECT_EQ(cell_text(dom, "slo-hour-judged"), "4");
  EXPECT_EQ(cell_text(dom, "slo-day-good"), integer(slo.at("lastDay").at("good")));
  char pct[32];
  std::snprintf(pct, sizeof pct, "%.1f %%", 100 * slo.at("lastHour").at("compliance").to_number<double>());
  EXPECT_EQ(cell_text(dom, "slo-hour-compliance"), pct);
  const std::string burn = svg_by_id(dom, "plot-slo-burn");
  ASSERT_FALSE(burn.empty());
  EXPECT_EQ(bar_values(burn).size(), slo.at("slots").as_array().size());
  const std::string percentiles = svg_by_id(dom, "plot-percentiles");
  ASSERT_FALSE(percentiles.empty());
  for (const char* series : {"p50", "p90", "p99"})
    EXPECT_NE(percentiles.find("data-series=\"" + std::string(series) + "\""), std::string::npos) << series;
  EXPECT_EQ(cell_text(dom, "total-requests"), integer(stats->at("requests")));
}

}  // namespace
}  // namespace qf::test

namespace qf::test {
namespace {

TEST(ReportCommand, BadInputGetsAClearMessageAndNoPage) {
  const std::string dir = scratch_dir("report_command");
  const std::string out = dir + "/page.html";
  run_result r = run_quickfill({"report", "--out", out});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--from-stats FILE is required"), std::string::npos) << r.err;
  r = run_quickfill({"report", "--from-stats", dir + "/missing.json", "--out", out});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("cannot open"), std::string::npos) << r.err;
  write_file(dir + "/bad.json", "{\"requests\": 1,");
  r = run_quickfill({"report", "--from-stats", dir + "/bad.json", "--out", out});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("is not JSON"), std::string::npos) << r.err;
  write_file(dir + "/other.json", "{\"result\": {\"requests\": 1, \"answered\": 0}}");
  r = run_quickfill({"report", "--from-stats", dir + "/other.json", "--out", out});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("not quickfill/stats output: stats.slo: missing"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(out));
}

}  // namespace
}  // namespace qf::test
