// trim_oracle: the trim rules of post-processing judged against the truth,
// independent of any model, on HumanEval-infilling.
//
// For each task the document is `prompt + suffix` with the cursor at the hole
// (the end of `prompt`), as an editor holds it. The "model" then writes the
// truth -- the reference middle followed by the true text after it -- and the
// pipeline's post-processing runs on it exactly as on a model's output: the
// text streams through the stop checker (one character at a time, as if each
// were a token), the kept text is finalized with the file's grammar, and the
// result is what would be inserted. It is exact when it equals the middle:
// inserting it gives the original program. On an empty (or blank) line the suggestion
// fills that line and has no line break of its own, where the middle may
// end with one (the hole took the line's break): such a result gives the
// program with one empty line less, counted apart as "the same lines", as
// are results that differ from the middle only by spaces at line ends (which
// the rules trim). Both trigger kinds are run
// (automatic, explicit: they decide single- or multi-line differently).
// Prints the exact share per file and trigger, and with --show N the first N
// misses (what was kept against the middle).
//
//   trim_oracle [--data DIR] [--show N] [--limit N] [FILE.jsonl.gz ...]
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include <boost/json.hpp>

#include "indexing/lines.h"
#include "indexing/syntax_language.h"
#include "server/completion/postprocess.h"
#include "server/completion/settings.h"
#include "server/completion/syntax_rules.h"

using namespace qf::server::completion;
namespace fs = std::filesystem;
namespace json = boost::json;

namespace {

struct task {
  std::string id, prompt, suffix, middle;
};

// The tasks of a .jsonl.gz file (gzip -dc: no compression library needed).
std::vector<task> read_tasks(const std::string& path, int limit) {
  std::vector<task> out;
  const std::string cmd = "gzip -dc '" + path + "'";
  FILE* p = ::popen(cmd.c_str(), "r");
  if (!p) return out;
  std::string line;
  char buf[65536];
  auto take = [&] {
    if (line.empty()) return;
    boost::system::error_code ec;
    json::value v = json::parse(line, ec);
    line.clear();
    if (ec || !v.is_object()) return;
    const auto& o = v.as_object();
    out.push_back(task{std::string(o.at("task_id").as_string()), std::string(o.at("prompt").as_string()),
                       std::string(o.at("suffix").as_string()), std::string(o.at("canonical_solution").as_string())});
  };
  while (std::fgets(buf, sizeof buf, p)) {
    line += buf;
    if (!line.empty() && line.back() == '\n') take();
    if (limit > 0 && static_cast<int>(out.size()) >= limit) break;
  }
  take();
  ::pclose(p);
  return out;
}

// What post-processing keeps of `generated` at the hole of `t`.
std::string oracle(const task& t, bool explicit_trigger, const completion_settings& s,
                   const qf::index::syntax_language* python) {
  const std::string doc = t.prompt + t.suffix;
  int64_t line = 0;
  size_t line_start = 0;
  for (size_t i = 0; i < t.prompt.size(); ++i)
    if (t.prompt[i] == '\n') {
      ++line;
      line_start = i + 1;
    }
  const int64_t col = static_cast<int64_t>(t.prompt.size() - line_start);
  const cursor_context cx = make_cursor_context(doc, line, col);
  const trigger_decision dec = decide_trigger(cx, explicit_trigger, s);
  if (dec.skip) return "<no completion here>";
  stop_checker stops(cx, dec, true);
  const std::string generated = t.middle + t.suffix;
  for (size_t i = 0; i < generated.size(); ++i)
    if (stops.push(std::string_view(generated).substr(i, 1))) break;
  const syntax_window window = make_syntax_window(doc, t.prompt.size(), python);
  return finalize(stops.kept(), cx, dec, true, &window);
}

// `s` without trailing spaces and tabs on each line (the rules trim them).
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

std::string shown(const std::string& s) {
  std::string o;
  for (char c : s) o += c == '\n' ? std::string("\\n") : std::string(1, c);
  return o;
}

}  // namespace

int main(int argc, char** argv) {
  std::string data = "../shared/data/humaneval-infilling";
  if (const char* d = std::getenv("QUICKFILL_TEST_DATA"); d && *d) data = std::string(d) + "/humaneval-infilling";
  int show = 0, limit = 0;
  std::vector<std::string> files;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto next = [&] { return i + 1 < argc ? std::string(argv[++i]) : std::string(); };
    if (a == "--data") data = next();
    else if (a == "--show") show = std::atoi(next().c_str());
    else if (a == "--limit") limit = std::atoi(next().c_str());
    else if (a.rfind("--", 0) == 0) {
      std::fprintf(stderr, "usage: trim_oracle [--data DIR] [--show N] [--limit N] [FILE.jsonl.gz ...]\n");
      return 2;
    } else files.push_back(a);
  }
  if (files.empty())
    for (const char* f : {"HumanEval-SingleLineInfilling.jsonl.gz", "HumanEval-MultiLineInfilling.jsonl.gz",
                          "HumanEval-RandomSpanInfillingLight.jsonl.gz"})
      files.push_back(data + "/" + f);
  const qf::index::syntax_language* python = qf::index::find_syntax_language("python", "file:///t.py");
  completion_settings s;
  for (const std::string& f : files) {
    const std::vector<task> tasks = read_tasks(f, limit);
    if (tasks.empty()) {
      std::fprintf(stderr, "no tasks read from %s\n", f.c_str());
      return 1;
    }
    for (bool expl : {false, true}) {
      int exact = 0, same_lines = 0, shown_misses = 0;
      for (const task& t : tasks) {
        const std::string got = oracle(t, expl, s, python);
        const bool empty_line = t.suffix.find_first_not_of(" \t") == std::string::npos ||
                                t.suffix[t.suffix.find_first_not_of(" \t")] == '\n';
        const bool at_line_start = t.prompt.empty() || t.prompt.back() == '\n';
        if (got == t.middle) {
          ++exact;
        } else if (!got.empty() && (rstrip_lines(got) == rstrip_lines(t.middle) ||
                                    (empty_line && at_line_start && rstrip_lines(got + "\n") == rstrip_lines(t.middle)))) {
          ++same_lines;
        } else if (shown_misses < show) {
          ++shown_misses;
          std::printf("  miss %s (%s)\n    middle: %s\n    kept:   %s\n", t.id.c_str(), expl ? "explicit" : "automatic",
                      shown(t.middle).c_str(), shown(got).c_str());
        }
      }
      std::printf("%s, %s trigger: %d of %zu exact (%.1f %%), %d more the same lines (%.1f %% in all)\n",
                  fs::path(f).filename().c_str(), expl ? "explicit" : "automatic", exact, tasks.size(),
                  100.0 * exact / tasks.size(), same_lines, 100.0 * (exact + same_lines) / tasks.size());
    }
  }
  return 0;
}
