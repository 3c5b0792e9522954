// bench_next_edit: how long does a next-edit prediction take?
//
// Loads a model (a synthetic Qwen2.5-Coder-0.5B-shaped one from
// run_next_edit_bench.sh, or any GGUF), opens an 80-line Python document,
// records a rename in the edit history and then, run after run, types one
// more character at the renamed line and asks for the next edit at the
// cursor with the sweep layout and a region of --region-lines lines. Each run
// rewrites the whole region: the token limit is the region's own token count,
// as long as a real rewrite of it (a random-weight model never ends early on
// its own). Prints the per-run wall time (p50, p90, cold first run apart) and
// the tokens evaluated, generated and drafted/accepted.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "indexing/edit_history.h"
#include "text/lines.h"
#include "server/completion/decode/engine_backend.h"
#include "server/completion/pipeline/pipeline.h"

using namespace qf::server;
using namespace qf::server::completion;

namespace {

std::string document() {
  std::string s = "import math\n\n\nclass Shape:\n    def __init__(self, width, height):\n";
  s += "        self.width = width\n        self.height = height\n\n";
  for (int i = 0; s.size() < 3000 && i < 200; ++i)
    s += "    def f" + std::to_string(i) + "(self, w, h):\n        return self.width * w + h - " + std::to_string(i) +
         "\n\n";
  return s;
}

double pct(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  const size_t k = std::min(v.size() - 1, static_cast<size_t>(q * static_cast<double>(v.size() - 1) + 0.5));
  return v[k];
}

}  // namespace

int main(int argc, char** argv) {
  std::string model;
  int reps = 5, region_lines = 20, threads = 2;
  std::string device = "cpu";
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto next = [&]() -> std::string { return i + 1 < argc ? argv[++i] : ""; };
    if (a == "--model") model = next();
    else if (a == "--reps") reps = std::atoi(next().c_str());
    else if (a == "--region-lines") region_lines = std::atoi(next().c_str());
    else if (a == "--threads") threads = std::atoi(next().c_str());
    else if (a == "--device") device = next();
    else {
      std::fprintf(stderr, "usage: bench_next_edit --model FILE.gguf [--reps N] [--region-lines N] [--threads N] "
                           "[--device cpu|cuda|auto]\n");
      return 2;
    }
  }
  if (model.empty() || reps < 1) {
    std::fprintf(stderr, "bench_next_edit: --model is required\n");
    return 2;
  }
  engine_options eo;
  eo.threads = threads;
  eo.device = device;
  std::string err;
  std::unique_ptr<lm_backend> backend = load_engine_backend(model, eo, &err);
  if (!backend) {
    std::fprintf(stderr, "bench_next_edit: %s\n", err.c_str());
    return 1;
  }
  std::string text = document();
  const int64_t line = 40;  // "        return self.width * w + h - N" of some method
  const size_t ls = qf::text::line_start_offset(text, line);
  // The region's size in tokens: a real rewrite of it is about as long.
  const size_t rs = qf::text::line_start_offset(text, line - region_lines / 2);
  const size_t re = qf::text::line_start_offset(text, line - region_lines / 2 + region_lines);
  const int region_tokens = static_cast<int>(backend->vocab().encode(std::string_view(text).substr(rs, re - rs)).size());
  completion_settings s;
  s.next_edit_format = "sweep";
  s.next_edit_region_lines = region_lines;
  s.next_edit_max_tokens = region_tokens;
  const std::string desc = backend->describe();
  pipeline p(std::move(backend), s);

  auto history = std::make_shared<qf::index::edit_history>();
  const std::string uri = "file:///bench/shapes.py";
  const size_t w = text.find("(self, w, h)", ls - 200) + 7;  // the parameter w above the cursor line
  std::string before = text;
  text.replace(w, 1, "wid");
  history->record(uri, before, text, 1);
  std::vector<double> wall;
  double cold = 0;
  std::vector<double> evaluated, generated;
  int64_t drafted = 0, accepted = 0, complete = 0;
  const size_t cursor_line_end = qf::text::line_start_offset(text, line + 1) - 1;
  size_t at = cursor_line_end;
  for (int r = 0; r <= reps; ++r) {
    // One keystroke at the end of the cursor's line.
    before = text;
    text.insert(at, 1, r % 2 ? ' ' : '1');
    ++at;
    history->record(uri, before, text, r + 2);
    next_edit_request req;
    req.uri = uri;
    req.version = r + 2;
    req.text = text;
    const qf::text::line_col lc = qf::text::line_col_of_offset(text, at);
    req.cursor = {lc.line, lc.col};
    req.edits = history;
    req.received = std::chrono::steady_clock::now();
    const auto t0 = std::chrono::steady_clock::now();
    const next_edit_result res = p.next_edit(req, {});
    const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    if (r == 0) {
      cold = ms;
      continue;  // the first run fills the cache
    }
    wall.push_back(ms);
    evaluated.push_back(static_cast<double>(res.metrics.tokens_evaluated));
    generated.push_back(static_cast<double>(res.metrics.tokens_generated));
    drafted += res.metrics.tokens_drafted;
    accepted += res.metrics.tokens_accepted;
    if (!res.incomplete) ++complete;
    std::printf("run %d: %.0f ms, evaluated %lld, reused %lld, generated %lld, drafted %lld, accepted %lld, %zu edit(s)%s\n",
                r, ms, static_cast<long long>(res.metrics.tokens_evaluated),
                static_cast<long long>(res.metrics.tokens_reused), static_cast<long long>(res.metrics.tokens_generated),
                static_cast<long long>(res.metrics.tokens_drafted), static_cast<long long>(res.metrics.tokens_accepted),
                res.edits.size(), res.incomplete ? " (rewrite cut at the token limit)" : "");
    std::fflush(stdout);
  }
  std::printf("\nmodel: %s, %d thread(s)\n", desc.c_str(), threads);
  std::printf("next edit, sweep layout, %d-line region (%d tokens, token limit %d), %d runs after a cold one:\n",
              region_lines, region_tokens, region_tokens, reps);
  std::printf("  wall p50 %.0f ms, p90 %.0f ms (cold first run %.0f ms)\n", pct(wall, 0.5), pct(wall, 0.9), cold);
  std::printf("  prompt tokens evaluated per run: median %.0f; generated: median %.0f; drafts accepted %lld of %lld; "
              "rewrites ended by the model: %lld of %d\n",
              pct(evaluated, 0.5), pct(generated, 0.5), static_cast<long long>(accepted),
              static_cast<long long>(drafted), static_cast<long long>(complete), reps);
  return 0;
}
