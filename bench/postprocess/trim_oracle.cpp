// trim_oracle: the trim rules of post-processing judged against the truth,
// independent of any model, on HumanEval-infilling. The oracle itself is
// server/cli/eval_oracle.h, shared with `quickfill eval --oracle`; this
// program prints it for all three files and both trigger kinds (automatic,
// explicit: they decide single- or multi-line differently), with --show N
// the first N misses (what was kept against the middle).
//
//   trim_oracle [--data DIR] [--show N] [--limit N] [FILE.jsonl.gz ...]
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "server/cli/eval_oracle.h"
#include "server/cli/eval_tasks.h"

namespace fs = std::filesystem;

namespace {

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
    for (const char* b : {"humaneval-single", "humaneval-multi", "humaneval-span"})
      files.push_back(data + "/" + qf::cli::humaneval_file(b));
  const qf::server::completion::completion_settings s;
  for (const std::string& f : files) {
    std::vector<qf::cli::eval_task> tasks;
    std::string error;
    if (!qf::cli::load_humaneval(f, fs::path(f).filename().string(), limit, tasks, &error)) {
      std::fprintf(stderr, "trim_oracle: %s\n", error.c_str());
      return 1;
    }
    for (bool expl : {false, true}) {
      const qf::cli::oracle_totals tot = qf::cli::run_trim_oracle(tasks, expl, s, show);
      for (const auto& [t, kept] : tot.misses)
        std::printf("  miss %s (%s)\n    middle: %s\n    kept:   %s\n", t->id.c_str(), expl ? "explicit" : "automatic",
                    shown(t->middle).c_str(), shown(kept).c_str());
      std::printf("%s, %s trigger: %d of %d exact (%.1f %%), %d more the same lines (%.1f %% in all)\n",
                  fs::path(f).filename().c_str(), expl ? "explicit" : "automatic", tot.exact, tot.tasks,
                  100.0 * tot.exact / tot.tasks, tot.same_lines, 100.0 * (tot.exact + tot.same_lines) / tot.tasks);
    }
  }
  return 0;
}
