// The dashboard page (see report_html.h).
#include "server/report/report_html.h"

#include <ctime>
#include <stdexcept>

#include <boost/json.hpp>

#include "server/report/svg_plot.h"

namespace qf::server::report {

namespace json = boost::json;

namespace {

// Reading the stats JSON with the path of a bad member in the error.
struct bad_stats : std::runtime_error {
  using std::runtime_error::runtime_error;
};

const json::object& obj(const json::value& v, const std::string& path) {
  if (!v.is_object()) throw bad_stats(path + ": expected an object");
  return v.get_object();
}
const json::value& member(const json::object& o, const std::string& key, const std::string& path) {
  const json::value* v = o.if_contains(key);
  if (!v) throw bad_stats(path + "." + key + ": missing");
  return *v;
}
double number(const json::object& o, const std::string& key, const std::string& path) {
  const json::value& v = member(o, key, path);
  if (v.is_double()) return v.get_double();
  if (v.is_int64()) return static_cast<double>(v.get_int64());
  if (v.is_uint64()) return static_cast<double>(v.get_uint64());
  throw bad_stats(path + "." + key + ": expected a number");
}
const json::array& array(const json::object& o, const std::string& key, const std::string& path) {
  const json::value& v = member(o, key, path);
  if (!v.is_array()) throw bad_stats(path + "." + key + ": expected an array");
  return v.get_array();
}
std::vector<double> numbers(const json::array& a, const std::string& path) {
  std::vector<double> out;
  for (const auto& v : a) {
    if (v.is_double()) out.push_back(v.get_double());
    else if (v.is_int64()) out.push_back(static_cast<double>(v.get_int64()));
    else if (v.is_uint64()) out.push_back(static_cast<double>(v.get_uint64()));
    else throw bad_stats(path + ": expected numbers");
  }
  return out;
}

std::string percent(double share) { return format_number(share * 100.0, 1) + " %"; }

// A table cell whose figure a test can find: <td id=.. data-value=..>shown</td>.
std::string cell(const std::string& id, double value, const std::string& shown) {
  return "<td id=\"" + escape_html(id) + "\" data-value=\"" + format_number(value, 4) + "\">" + escape_html(shown) +
         "</td>";
}

std::string utc_time(double epoch_s, const char* fmt) {
  const std::time_t t = static_cast<std::time_t>(epoch_s);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, fmt, &tm);
  return buf;
}

// Bucket labels from the edges: "<=10", "<=25", .., ">5000".
std::vector<std::string> bucket_labels(const std::vector<double>& edges, std::size_t n_counts, int decimals) {
  std::vector<std::string> out;
  for (std::size_t i = 0; i < n_counts; ++i)
    out.push_back(i < edges.size() ? "\xE2\x89\xA4" + format_number(edges[i], decimals)
                                   : ">" + format_number(edges.empty() ? 0 : edges.back(), decimals));
  return out;
}

std::string histogram_plot(const json::object& cell_obj, const std::string& key, const std::string& path,
                           const std::string& id, const std::string& title, int edge_decimals) {
  const json::object& h = obj(member(cell_obj, key, path), path + "." + key);
  const std::vector<double> edges = numbers(array(h, "edges", path + "." + key), path + "." + key + ".edges");
  const std::vector<double> counts = numbers(array(h, "counts", path + "." + key), path + "." + key + ".counts");
  if (counts.size() != edges.size() + 1) throw bad_stats(path + "." + key + ".counts: expected one more than edges");
  bar_chart c;
  c.id = id;
  c.title = title;
  c.y_label = "requests";
  c.labels = bucket_labels(edges, counts.size(), edge_decimals);
  c.values = counts;
  return render(c);
}

const char* css = R"(body{font-family:sans-serif;margin:16px;color:#222;background:#fff;max-width:1340px}
h1{font-size:20px;margin:0 0 4px}h2{font-size:16px;margin:20px 0 6px;border-bottom:1px solid #ccc}
h3{font-size:14px;margin:12px 0 4px}.meta{color:#666;font-size:12px}
table{border-collapse:collapse;font-size:13px;margin:4px 0}td,th{border:1px solid #ddd;padding:3px 8px;text-align:right}
th{background:#f3f3f3}td:first-child,th:first-child{text-align:left}
.plots{display:flex;flex-wrap:wrap;gap:8px}.plot{max-width:100%;height:auto;background:#fafafa;border:1px solid #eee}
.plot text{font-size:11px;fill:#444}.plot .plot-title{font-size:13px;font-weight:bold;fill:#222}
.bar{fill:#4c78a8}.grid{stroke:#e4e4e4}.reference{stroke:#d62728;stroke-dasharray:5 4}
.plot .reference-label{fill:#d62728}.ok{color:#2a7d2a}.bad{color:#c62828}.none{color:#888}
)";

std::string slo_section(const json::object& slo) {
  const std::string p = "stats.slo";
  const double budget = number(slo, "budgetMs", p), target = number(slo, "target", p);
  std::string s = "<h2>Latency SLO</h2><p>" + percent(target) + " of answered automatic completions replied within " +
                  format_number(budget, 0) + " ms of arrival.</p><table><tr><th>window</th><th>judged</th>"
                  "<th>within budget</th><th>compliance</th><th>burn rate</th></tr>";
  for (const auto& [key, name, id] : {std::tuple{"lastHour", "last hour", "hour"}, {"lastDay", "last day", "day"}}) {
    const json::object& w = obj(member(slo, key, p), p + "." + key);
    const std::string wp = p + "." + key;
    const double judged = number(w, "judged", wp), good = number(w, "good", wp);
    const double compliance = number(w, "compliance", wp), burn = number(w, "burnRate", wp);
    s += std::string("<tr class=\"") + (judged == 0 ? "none" : compliance >= target ? "ok" : "bad") + "\"><td>" +
         name + "</td>" + cell(std::string("slo-") + id + "-judged", judged, format_number(judged, 0)) +
         cell(std::string("slo-") + id + "-good", good, format_number(good, 0)) +
         cell(std::string("slo-") + id + "-compliance", compliance, judged ? percent(compliance) : "no data") +
         cell(std::string("slo-") + id + "-burn", burn, format_number(burn, 2)) + "</tr>";
  }
  s += "</table>";

  const json::array& slots = array(slo, "slots", p);
  bar_chart burn;
  burn.id = "plot-slo-burn";
  burn.title = "SLO burn rate per " + format_number(number(slo, "slotSeconds", p) / 60, 0) + " minutes (UTC)";
  burn.y_label = "burn rate";
  burn.decimals = 2;
  burn.reference = 1;
  burn.reference_label = "budget spent exactly";
  line_chart pct;
  pct.id = "plot-percentiles";
  pct.title = "Reply time of automatic completions (at most, ms)";
  pct.y_label = "ms";
  pct.reference = budget;
  pct.reference_label = "budget " + format_number(budget, 0) + " ms";
  line_series p50{"p50", "#4c78a8", {}}, p90{"p90", "#f58518", {}}, p99{"p99", "#e45756", {}};
  for (std::size_t i = 0; i < slots.size(); ++i) {
    const std::string sp = p + ".slots[" + std::to_string(i) + "]";
    const json::object& sl = obj(slots[i], sp);
    const std::string label = utc_time(number(sl, "start", sp), "%H:%M");
    burn.labels.push_back(label);
    burn.values.push_back(number(sl, "burnRate", sp));
    pct.x_labels.push_back(label);
    p50.values.push_back(number(sl, "p50Ms", sp));
    p90.values.push_back(number(sl, "p90Ms", sp));
    p99.values.push_back(number(sl, "p99Ms", sp));
  }
  pct.series = {p50, p90, p99};
  return s + "<div class=\"plots\">" + render(burn) + render(pct) + "</div>";
}

std::string histograms_section(const json::object& histograms) {
  const std::string p = "stats.histograms";
  const json::object& by_source = obj(member(histograms, "bySource", p), p + ".bySource");
  std::string s = "<h2>Per source and trigger kind</h2>";
  for (const auto& [source, triggers] : by_source) {
    const std::string sp = p + ".bySource." + std::string(source);
    for (const auto& [trigger, value] : obj(triggers, sp)) {
      const std::string cp = sp + "." + std::string(trigger);
      const json::object& c = obj(value, cp);
      const double requests = number(c, "requests", cp);
      if (requests == 0) continue;
      const std::string id = std::string(source) + "-" + std::string(trigger);
      s += "<h3 id=\"cell-" + escape_html(id) + "\">" + escape_html(std::string(source)) + ", " +
           escape_html(std::string(trigger)) + "</h3><table><tr><th>requests</th><th>answered</th><th>cancelled</th>"
           "<th>no model</th></tr><tr>" +
           cell(id + "-requests", requests, format_number(requests, 0)) +
           cell(id + "-answered", number(c, "answered", cp), format_number(number(c, "answered", cp), 0)) +
           cell(id + "-cancelled", number(c, "cancelled", cp), format_number(number(c, "cancelled", cp), 0)) +
           cell(id + "-noModel", number(c, "noModel", cp), format_number(number(c, "noModel", cp), 0)) +
           "</tr></table><div class=\"plots\">" +
           histogram_plot(c, "ttftMs", cp, "hist-" + id + "-ttftMs", "Time to first token (ms)", 0) +
           histogram_plot(c, "totalMs", cp, "hist-" + id + "-totalMs", "Total time (ms)", 0) +
           histogram_plot(c, "tokensPerSecond", cp, "hist-" + id + "-tokensPerSecond", "Decode speed (tokens/s)", 0) +
           histogram_plot(c, "cacheReuse", cp, "hist-" + id + "-cacheReuse", "Prompt share from the cache", 1) +
           "</div>";
    }
  }
  return s;
}

std::string counts_table(const std::string& title, const std::string& id_prefix, const json::object& counts,
                         const std::string& p, const std::string& column = "reason") {
  std::string s = "<h2>" + escape_html(title) + "</h2>";
  if (counts.empty()) return s + "<p class=\"none\">none</p>";
  s += "<table><tr><th>" + escape_html(column) + "</th><th>count</th></tr>";
  for (const auto& [k, v] : counts) {
    const double n = number(counts, std::string(k), p);
    s += "<tr><td>" + escape_html(std::string(k)) + "</td>" + cell(id_prefix + std::string(k), n, format_number(n, 0)) +
         "</tr>";
    (void)v;
  }
  return s + "</table>";
}

std::string acceptance_section(const json::object& acc) {
  const std::string p = "stats.acceptance";
  const json::object& by_source = obj(member(acc, "bySource", p), p + ".bySource");
  std::string s = "<h2>Acceptance</h2><table><tr><th>source</th><th>trigger</th><th>shown</th><th>accepted</th>"
                  "<th>partly</th><th>rate</th></tr>";
  bool any = false;
  for (const auto& [source, triggers] : by_source) {
    const std::string sp = p + ".bySource." + std::string(source);
    for (const auto& [trigger, value] : obj(triggers, sp)) {
      const std::string cp = sp + "." + std::string(trigger);
      const json::object& c = obj(value, cp);
      const std::string id = "acceptance-" + std::string(source) + "-" + std::string(trigger);
      const double shown = number(c, "shown", cp), accepted = number(c, "accepted", cp);
      const double partly = number(c, "partlyAccepted", cp), rate = number(c, "acceptanceRate", cp);
      s += "<tr><td>" + escape_html(std::string(source)) + "</td><td>" + escape_html(std::string(trigger)) + "</td>" +
           cell(id + "-shown", shown, format_number(shown, 0)) +
           cell(id + "-accepted", accepted, format_number(accepted, 0)) +
           cell(id + "-partly", partly, format_number(partly, 0)) + cell(id + "-rate", rate, percent(rate)) + "</tr>";
      any = true;
    }
  }
  if (!any) s += "<tr><td colspan=\"6\" class=\"none\">nothing shown yet</td></tr>";
  return s + "</table>";
}

// Per completion source (stats.sources, server/routing/source_board.h).
std::string completion_sources_section(const json::array& sources) {
  std::string s = "<h2>Completion sources</h2><table><tr><th>source</th><th>kind</th><th>state</th><th>requests</th>"
                  "<th>answered</th><th>errors</th><th>skipped</th><th>prompt tokens</th><th>completion tokens</th>"
                  "<th>p50 ms</th><th>p90 ms</th><th>p99 ms</th><th>tokens last hour</th><th>tokens last day</th></tr>";
  for (std::size_t i = 0; i < sources.size(); ++i) {
    const std::string p = "stats.sources[" + std::to_string(i) + "]";
    const json::object& o = obj(sources[i], p);
    const std::string name = std::string(member(o, "name", p).is_string() ? member(o, "name", p).get_string() : "");
    const std::string kind = std::string(member(o, "kind", p).is_string() ? member(o, "kind", p).get_string() : "");
    const std::string state = std::string(member(o, "state", p).is_string() ? member(o, "state", p).get_string() : "");
    const json::object& skipped = obj(member(o, "skipped", p), p + ".skipped");
    double skips = 0;  // down, deadline, quota, load
    for (const auto& kv : skipped) skips += number(skipped, std::string(kv.key()), p + ".skipped");
    const json::object& lat = obj(member(o, "latencyMs", p), p + ".latencyMs");
    const json::object& q = obj(member(o, "quota", p), p + ".quota");
    const std::string id = "source-" + name;
    auto count = [&](const char* key) { return cell(id + "-" + key, number(o, key, p), format_number(number(o, key, p), 0)); };
    auto ms = [&](const char* key) {
      return cell(id + "-" + key, number(lat, key, p + ".latencyMs"), format_number(number(lat, key, p + ".latencyMs"), 1));
    };
    auto quota = [&](const char* used, const char* limit) {
      const double u = number(q, used, p + ".quota"), l = number(q, limit, p + ".quota");
      return cell(id + "-" + used, u, format_number(u, 0) + (l > 0 ? " / " + format_number(l, 0) : ""));
    };
    s += "<tr><td>" + escape_html(name) + "</td><td>" + escape_html(kind) + "</td><td>" + escape_html(state) + "</td>" +
         count("requests") + count("answered") + count("errors") + cell(id + "-skipped", skips, format_number(skips, 0)) +
         count("promptTokens") + count("completionTokens") + ms("p50") + ms("p90") + ms("p99") +
         quota("tokensLastHour", "tokensPerHour") + quota("tokensLastDay", "tokensPerDay") + "</tr>";
  }
  if (sources.empty()) s += "<tr><td colspan=\"14\" class=\"none\">no source</td></tr>";
  return s + "</table>";
}

std::string render_or_throw(const json::value& stats) {
  const json::object& st = obj(stats, "stats");
  const std::string p = "stats";
  const double requests = number(st, "requests", p), answered = number(st, "answered", p);
  const json::object& slo = obj(member(st, "slo", p), "stats.slo");
  std::string body = "<h1>quickfill dashboard</h1><p class=\"meta\">" + format_number(requests, 0) +
                     " completion requests, " + format_number(answered, 0) + " answered, cache hit rate " +
                     percent(number(st, "cacheHitRate", p)) + "; stats taken " +
                     utc_time(number(slo, "now", "stats.slo"), "%Y-%m-%d %H:%M:%S UTC") + ".</p>";
  body += "<table><tr><th>requests</th><th>answered</th><th>no model</th></tr><tr>" +
          cell("total-requests", requests, format_number(requests, 0)) +
          cell("total-answered", answered, format_number(answered, 0)) +
          cell("total-noModel", number(st, "noModel", p), format_number(number(st, "noModel", p), 0)) + "</tr></table>";
  body += slo_section(slo);
  body += histograms_section(obj(member(st, "histograms", p), "stats.histograms"));
  body += counts_table("Cancellations", "cancel-", obj(member(st, "cancellations", p), "stats.cancellations"),
                       "stats.cancellations");
  if (const json::value* d = st.if_contains("degraded"))
    body += counts_table("Degraded under load", "degraded-", obj(*d, "stats.degraded"), "stats.degraded", "kind");
  if (st.contains("sources")) body += completion_sources_section(array(st, "sources", p));
  if (const json::value* a = st.if_contains("acceptance")) body += acceptance_section(obj(*a, "stats.acceptance"));
  if (const json::value* c = st.if_contains("confidence")) {
    const json::object& conf = obj(*c, "stats.confidence");
    const json::object& score = obj(member(conf, "score", "stats.confidence"), "stats.confidence.score");
    const std::string sp = "stats.confidence.score";
    body += "<h2>Confidence</h2><table><tr><th>scored</th><th>p50</th><th>p90</th><th>gated answers</th></tr><tr>" +
            cell("confidence-count", number(score, "count", sp), format_number(number(score, "count", sp), 0)) +
            cell("confidence-p50", number(score, "p50", sp), format_number(number(score, "p50", sp), 3)) +
            cell("confidence-p90", number(score, "p90", sp), format_number(number(score, "p90", sp), 3)) +
            cell("confidence-gated", number(conf, "gated", "stats.confidence"),
                 format_number(number(conf, "gated", "stats.confidence"), 0)) +
            "</tr></table>";
  }
  return render_page("quickfill dashboard", body);
}

}  // namespace

std::string render_page(const std::string& title, const std::string& body) {
  return "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>" + escape_html(title) +
         "</title>"
         "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'\">"
         "<style>" +
         std::string(css) + "</style></head><body>" + body + "</body></html>\n";
}

std::string render_report_html(const json::value& stats, std::string* error) {
  try {
    return render_or_throw(stats);
  } catch (const bad_stats& e) {
    if (error) *error = e.what();
    return {};
  }
}

}  // namespace qf::server::report
