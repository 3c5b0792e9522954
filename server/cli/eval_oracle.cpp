// The trim rules against the truth (see the header).
#include "server/cli/eval_oracle.h"

#include "indexing/syntax_language.h"
#include "server/completion/postprocess/cleanup.h"
#include "server/completion/postprocess/stop_rules.h"
#include "server/completion/postprocess/syntax_rules.h"

namespace qf::cli {

using namespace qf::server::completion;

std::string rstrip_lines(const std::string& s) {
  std::string out, line;
  for (char c : s) {
    if (c == '\n') {
      while (!line.empty() && (line.back() == ' ' || line.back() == '\t')) line.pop_back();
      out += line + "\n";
      line.clear();
    } else {
      line += c;
    }
  }
  while (!line.empty() && (line.back() == ' ' || line.back() == '\t')) line.pop_back();
  return out + line;
}

oracle_result trim_oracle(const eval_task& t, bool explicit_trigger, const completion_settings& s) {
  oracle_result r;
  const std::string doc = t.prompt + t.suffix;
  const hole_position hole = hole_of(t);
  const cursor_context cx = make_cursor_context(doc, hole.line, hole.col);
  const trigger_decision dec = decide_trigger(cx, explicit_trigger, s);
  if (dec.skip) {
    r.kept = "<no completion here>";
    return r;
  }
  stop_checker stops(cx, dec, true);
  const std::string generated = t.middle + t.suffix;
  for (size_t i = 0; i < generated.size(); ++i)
    if (stops.push(std::string_view(generated).substr(i, 1))) break;
  const qf::index::syntax_language* lang = qf::index::find_syntax_language(t.language, t.uri);
  const syntax_window window = make_syntax_window(doc, t.prompt.size(), lang);
  r.kept = finalize(stops.kept(), cx, dec, true, &window);

  const size_t first = t.suffix.find_first_not_of(" \t");
  const bool empty_line = first == std::string::npos || t.suffix[first] == '\n';
  const bool at_line_start = t.prompt.empty() || t.prompt.back() == '\n';
  if (r.kept == t.middle)
    r.verdict = oracle_verdict::exact;
  else if (!r.kept.empty() && (rstrip_lines(r.kept) == rstrip_lines(t.middle) ||
                               (empty_line && at_line_start && rstrip_lines(r.kept + "\n") == rstrip_lines(t.middle))))
    r.verdict = oracle_verdict::same_lines;
  return r;
}

oracle_totals run_trim_oracle(const std::vector<eval_task>& tasks, bool explicit_trigger, const completion_settings& s,
                              int show) {
  oracle_totals tot;
  for (const eval_task& t : tasks) {
    ++tot.tasks;
    oracle_result r = trim_oracle(t, explicit_trigger, s);
    if (r.verdict == oracle_verdict::exact) ++tot.exact;
    else if (r.verdict == oracle_verdict::same_lines) ++tot.same_lines;
    else if (static_cast<int>(tot.misses.size()) < show) tot.misses.emplace_back(&t, std::move(r.kept));
  }
  return tot;
}

}  // namespace qf::cli
