// Summaries, the table and the JSON of `quickfill eval` (see the header).
#include "server/cli/eval_report.h"

#include <algorithm>
#include <cstdio>

#include "text/utf8.h"
#include "server/cli/eval_score.h"

namespace qf::cli {
namespace {

namespace json = boost::json;

std::string pct(int n, int of) {
  if (of == 0) return "-";
  char b[32];
  std::snprintf(b, sizeof b, "%.1f %%", 100.0 * n / of);
  return b;
}

std::string num(double v, int decimals) {
  char b[32];
  std::snprintf(b, sizeof b, "%.*f", decimals, v);
  return b;
}

json::object summary_json(const eval_summary& s) {
  auto share = [](int n, int of) { return of ? json::value(static_cast<double>(n) / of) : json::value(nullptr); };
  return json::object{{"trigger", s.trigger},
                      {"language", s.language.empty() ? json::value(nullptr) : json::value(s.language)},
                      {"tasks", s.tasks},
                      {"suggested", s.suggested},
                      {"shown", s.shown},
                      {"shownShare", share(s.shown, s.tasks)},
                      {"exact", s.exact},
                      {"exactMatch", share(s.exact, s.tasks)},
                      {"editSimilarity", s.similarity},
                      {"executed", s.executed},
                      {"passed", s.passed},
                      {"pass@1", share(s.passed, s.executed)},
                      {"passedShown", s.passed_shown},
                      {"syntaxChecked", s.syntax_checked},
                      {"syntaxValid", share(s.syntax_ok, s.syntax_checked)},
                      {"retried", s.retried},
                      {"latencyMs", json::object{{"p50", s.latency_p50}, {"p90", s.latency_p90}}},
                      {"promptTokens", s.prompt_tokens},
                      {"generatedTokens", s.generated_tokens},
                      {"gate", json::object{{"threshold", s.gate}, {"origin", s.gate_origin}}}};
}

json::object record_json(const eval_record& r) {
  json::object o{{"id", r.task->id},
                 {"trigger", r.explicit_trigger ? "explicit" : "automatic"},
                 {"middle", text::repair_utf8(r.middle)},
                 {"shown", r.shown},
                 {"exact", r.exact},
                 {"similarity", r.similarity},
                 {"latencyMs", r.latency_ms},
                 {"promptTokens", r.prompt_tokens},
                 {"generatedTokens", r.generated_tokens},
                 {"tries", r.tries}};
  if (!r.task->kind.empty()) o["kind"] = r.task->kind;
  o["score"] = r.score ? json::value(*r.score) : json::value(nullptr);
  if (r.executed) o["passed"] = r.passed;
  if (r.syntax_checked) o["syntaxValid"] = r.syntax_ok;
  if (r.executed && !r.passed && !r.error.empty()) o["error"] = text::repair_utf8(r.error);
  return o;
}

}  // namespace

eval_summary summarize(const std::vector<eval_record>& records, bool explicit_trigger, double gate,
                       const std::string& gate_origin, const std::string& language) {
  eval_summary s;
  s.trigger = explicit_trigger ? "explicit" : "automatic";
  s.language = language;
  s.gate = gate;
  s.gate_origin = gate_origin;
  std::vector<double> latency;
  double sim = 0, prompt = 0, generated = 0;
  for (const eval_record& r : records) {
    if (r.explicit_trigger != explicit_trigger || (!language.empty() && r.task->language != language)) continue;
    ++s.tasks;
    s.suggested += r.suggested;
    s.shown += r.shown;
    s.exact += r.exact;
    sim += r.similarity;
    s.executed += r.executed;
    s.passed += r.passed;
    s.passed_shown += r.passed && r.shown;
    s.syntax_checked += r.suggested && r.syntax_checked;  // of the suggestions, not of empty holes
    s.syntax_ok += r.suggested && r.syntax_checked && r.syntax_ok;
    s.retried += r.tries > 1;
    latency.push_back(r.latency_ms);
    prompt += static_cast<double>(r.prompt_tokens);
    generated += static_cast<double>(r.generated_tokens);
  }
  if (s.tasks) {
    s.similarity = sim / s.tasks;
    s.prompt_tokens = prompt / s.tasks;
    s.generated_tokens = generated / s.tasks;
  }
  s.latency_p50 = percentile(latency, 50);
  s.latency_p90 = percentile(latency, 90);
  return s;
}

std::string format_table(const std::vector<eval_run>& runs) {
  struct column {
    std::string head;
    const eval_summary* s;
  };
  std::vector<column> cols;
  for (const eval_run& r : runs)
    for (const eval_summary& s : r.summaries)
      cols.push_back({(runs.size() > 1 ? r.label + " " : "") + s.trigger + (s.language.empty() ? "" : " " + s.language), &s});
  using row_fn = std::string (*)(const eval_summary&);
  const std::vector<std::pair<const char*, row_fn>> rows = {
      {"tasks", [](const eval_summary& s) { return std::to_string(s.tasks); }},
      {"pass@1 (executed)", [](const eval_summary& s) { return pct(s.passed, s.executed); }},
      {"pass@1, shown only", [](const eval_summary& s) { return pct(s.passed_shown, s.executed); }},
      {"exact match", [](const eval_summary& s) { return pct(s.exact, s.tasks); }},
      {"edit similarity", [](const eval_summary& s) { return num(s.similarity, 3); }},
      {"syntax valid", [](const eval_summary& s) { return pct(s.syntax_ok, s.syntax_checked); }},
      {"suggested", [](const eval_summary& s) { return pct(s.suggested, s.tasks); }},
      {"shown (gate)", [](const eval_summary& s) { return pct(s.shown, s.tasks); }},
      {"gate threshold", [](const eval_summary& s) { return num(s.gate, 2); }},
      {"latency p50 ms", [](const eval_summary& s) { return num(s.latency_p50, 0); }},
      {"latency p90 ms", [](const eval_summary& s) { return num(s.latency_p90, 0); }},
      {"asked again (cut short)", [](const eval_summary& s) { return std::to_string(s.retried); }},
      {"prompt tokens (mean)", [](const eval_summary& s) { return num(s.prompt_tokens, 0); }},
      {"generated tokens (mean)", [](const eval_summary& s) { return num(s.generated_tokens, 1); }},
  };
  std::string out;
  char b[256];
  std::snprintf(b, sizeof b, "%-24s", "");
  out += b;
  auto width = [](const column& c) { return static_cast<int>(std::max<size_t>(14, c.head.size())); };
  for (const column& c : cols) {
    std::snprintf(b, sizeof b, " %*s", width(c), c.head.c_str());
    out += b;
  }
  out += "\n";
  for (const auto& [name, fn] : rows) {
    std::snprintf(b, sizeof b, "%-24s", name);
    out += b;
    for (const column& c : cols) {
      std::snprintf(b, sizeof b, " %*s", width(c), fn(*c.s).c_str());
      out += b;
    }
    out += "\n";
  }
  for (const column& c : cols)
    if (!c.s->gate_origin.empty() && c.s->language.empty()) out += "gate of " + c.head + ": " + c.s->gate_origin + "\n";
  return out;
}

json::object runs_to_json(const std::string& benchmark, const std::vector<eval_run>& runs, const std::string& network,
                          bool with_records) {
  json::array rs;
  for (const eval_run& r : runs) {
    json::array sums, recs;
    for (const eval_summary& s : r.summaries) sums.push_back(summary_json(s));
    if (with_records)
      for (const eval_record& rec : r.records) recs.push_back(record_json(rec));
    json::object o{{"label", r.label}, {"model", text::repair_utf8(r.model)}, {"modelPath", r.model_path},
                   {"settings", r.settings}, {"summaries", std::move(sums)}};
    if (with_records) o["records"] = std::move(recs);
    rs.push_back(std::move(o));
  }
  return json::object{{"benchmark", benchmark}, {"network", network}, {"runs", std::move(rs)}};
}

}  // namespace qf::cli
