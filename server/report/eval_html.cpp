// The eval page (see the header).
#include "server/report/eval_html.h"

#include <stdexcept>
#include <vector>

#include <boost/json.hpp>

#include "server/report/report_html.h"
#include "server/report/svg_plot.h"

namespace qf::server::report {
namespace {

namespace json = boost::json;

struct bad_input : std::runtime_error {
  using std::runtime_error::runtime_error;
};

const json::object& object_at(const json::object& o, const char* key, const std::string& path) {
  const json::value* v = o.if_contains(key);
  if (!v || !v->is_object()) throw bad_input(path + "." + key + ": expected an object");
  return v->get_object();
}

const json::array& array_at(const json::object& o, const char* key, const std::string& path) {
  const json::value* v = o.if_contains(key);
  if (!v || !v->is_array()) throw bad_input(path + "." + key + ": expected an array");
  return v->get_array();
}

std::string string_at(const json::object& o, const char* key, const std::string& path) {
  const json::value* v = o.if_contains(key);
  if (!v || !v->is_string()) throw bad_input(path + "." + key + ": expected a string");
  return std::string(v->get_string());
}

// A number, or -1 for null (a share of nothing).
double number_at(const json::object& o, const char* key, const std::string& path) {
  const json::value* v = o.if_contains(key);
  if (v && v->is_null()) return -1;
  if (!v || !v->is_number()) throw bad_input(path + "." + key + ": expected a number");
  return v->to_number<double>();
}

struct column {
  std::string head;
  const json::object* s;
  std::string path;
};

std::string share_text(double v) { return v < 0 ? "-" : format_number(100 * v, 1) + " %"; }

}  // namespace

std::string render_eval_html(const json::value& eval, std::string* error) {
  try {
    if (!eval.is_object()) throw bad_input("eval: expected an object");
    const json::object& e = eval.get_object();
    const std::string benchmark = string_at(e, "benchmark", "eval");
    const json::array& runs = array_at(e, "runs", "eval");
    std::vector<column> cols;
    std::string models;
    for (size_t i = 0; i < runs.size(); ++i) {
      const std::string rp = "eval.runs[" + std::to_string(i) + "]";
      if (!runs[i].is_object()) throw bad_input(rp + ": expected an object");
      const json::object& r = runs[i].get_object();
      const std::string label = string_at(r, "label", rp), settings = string_at(r, "settings", rp);
      models += "<li><b>" + escape_html(label) + "</b>: " + escape_html(string_at(r, "model", rp)) +
                (settings.empty() ? "" : ", settings <code>" + escape_html(settings) + "</code>") + "</li>";
      const json::array& sums = array_at(r, "summaries", rp);
      for (size_t k = 0; k < sums.size(); ++k) {
        const std::string sp = rp + ".summaries[" + std::to_string(k) + "]";
        if (!sums[k].is_object()) throw bad_input(sp + ": expected an object");
        const json::object& s = sums[k].get_object();
        const json::value* lang = s.if_contains("language");
        const std::string group = lang && lang->is_string() ? " " + std::string(lang->get_string()) : "";
        cols.push_back({(runs.size() > 1 ? label + " " : "") + string_at(s, "trigger", sp) + group, &s, sp});
      }
    }
    struct row {
      const char* name;
      const char* key;
      int kind;  // 0 share, 1 number (3 decimals), 2 count, 3 mean (1 decimal)
    };
    const row rows[] = {{"pass@1 (executed)", "pass@1", 0},   {"exact match", "exactMatch", 0},
                        {"edit similarity", "editSimilarity", 1}, {"syntax valid", "syntaxValid", 0},
                        {"shown (gate)", "shownShare", 0},       {"tasks", "tasks", 2},
                        {"prompt tokens (mean)", "promptTokens", 3}, {"generated tokens (mean)", "generatedTokens", 3}};
    std::string body = "<h1>quickfill eval: " + escape_html(benchmark) + "</h1><p class=\"meta\">" +
                       escape_html(string_at(e, "network", "eval")) + "</p><ul>" + models + "</ul>";
    body += "<h2>Measures</h2><table><tr><th></th>";
    for (const column& c : cols) body += "<th>" + escape_html(c.head) + "</th>";
    body += "</tr>";
    for (const row& r : rows) {
      body += "<tr><td>" + std::string(r.name) + "</td>";
      for (const column& c : cols) {
        const double v = number_at(*c.s, r.key, c.path);
        const std::string text = r.kind == 0 ? share_text(v) : format_number(v, r.kind == 1 ? 3 : r.kind == 3 ? 1 : 0);
        body += "<td data-value=\"" + format_number(v, 6) + "\">" + text + "</td>";
      }
      body += "</tr>";
    }
    for (const char* p : {"p50", "p90"}) {
      body += "<tr><td>latency " + std::string(p) + " (ms)</td>";
      for (const column& c : cols) {
        const double v = number_at(object_at(*c.s, "latencyMs", c.path), p, c.path + ".latencyMs");
        body += "<td data-value=\"" + format_number(v, 3) + "\">" + format_number(v, 0) + "</td>";
      }
      body += "</tr>";
    }
    body += "<tr><td>gate</td>";
    for (const column& c : cols) {
      const json::object& g = object_at(*c.s, "gate", c.path);
      body += "<td>" + format_number(number_at(g, "threshold", c.path + ".gate"), 2) + " (" +
              escape_html(string_at(g, "origin", c.path + ".gate")) + ")</td>";
    }
    body += "</tr></table><h2>Side by side</h2><div class=\"plots\">";
    const row plotted[] = {{"pass@1 (%)", "pass@1", 0}, {"exact match (%)", "exactMatch", 0},
                           {"edit similarity (%)", "editSimilarity", 0}, {"shown (%)", "shownShare", 0}};
    for (const row& r : plotted) {
      bool any = false;  // pass@1 of points without tests is null everywhere: no plot
      for (const column& c : cols) any = any || number_at(*c.s, r.key, c.path) >= 0;
      if (!any) continue;
      bar_chart b;
      b.id = std::string("eval-") + r.key;
      b.title = r.name;
      b.y_label = "%";
      b.decimals = 1;
      for (const column& c : cols) {
        b.labels.push_back(c.head);
        b.values.push_back(std::max(0.0, 100 * number_at(*c.s, r.key, c.path)));
      }
      body += render(b);
    }
    body += "</div>";
    return render_page("quickfill eval: " + benchmark, body);
  } catch (const bad_input& ex) {
    if (error) *error = ex.what();
    return "";
  }
}

}  // namespace qf::server::report
