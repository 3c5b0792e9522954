// confidence_bench: what a confidence gate keeps, and what n candidates cost.
//
// Gate: for each file, cursor positions are sampled as in postprocess_bench
// (a random line with at least 8 non-blank characters, cut between 30% and
// 70% of it, the rest of the line removed: that rest is the truth). Each
// position gets an automatic completion from the pipeline (default settings,
// gate off, no deadline). A suggestion *matches* when its first line is
// non-empty and the truth starts with it (accepting it types correct text);
// it is *similar* when the edit similarity of that line and the truth is at
// least 0.5 (the bundled model rarely matches exactly).
// Printed: the score quantiles of matching and other suggestions, and for a
// range of thresholds the share of suggestions shown, the share of shown ones
// that match / are similar (precision) and the share of those kept.
//
// Timing (--timing): one prompt, explicitly invoked with n = 1 and n = 3
// candidates (temperature 0.7, a fixed number of tokens, no stop rules), the
// prompt cached after a first request; the median total time of --runs
// requests each, interleaved, and their ratio.
#include <algorithm>
#include <string_view>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "bench/bench_args.h"
#include "bench/bench_stats.h"
#include "bench/completion_bench.h"
#include "server/cli/eval_score.h"
#include "text/lines.h"
#include "server/completion/pipeline/pipeline.h"

using namespace qf::server;
using namespace qf::server::completion;
using namespace qf::bench;

namespace {

std::vector<std::string> default_files() {
  const std::string src = QF_SOURCE_DIR;
  const std::string nm = src + "/indexing/grammars/node_modules";
  std::vector<std::string> out;
  // Code the bundled model was not trained on (models/README.md lists its sources).
  for (const char* f : {"algorithms.py", "api_jws.py", "api_jwt.py", "jwks_client.py", "utils.py", "help.py"})
    out.push_back(std::string("/usr/lib/python3/dist-packages/jwt/") + f);
  for (const char* f : {"lexer.c", "node.c", "tree_cursor.c", "stack.c", "subtree.c", "language.c", "tree.c",
                        "query.c", "parser.c"})
    out.push_back(nm + "/tree-sitter/vendor/tree-sitter/lib/src/" + f);
  for (const char* g : {"python", "javascript", "go", "c", "cpp", "rust", "java"})
    out.push_back(nm + "/tree-sitter-" + std::string(g) + "/grammar.js");
  return out;
}

struct sample {
  double score;
  bool match;    // the truth starts with the suggestion's first line
  bool similar;  // edit similarity of first line and truth >= 0.5
};


int run_gate(std::unique_ptr<lm_backend> backend, const std::vector<std::string>& files, int per_file, unsigned seed) {
  completion_settings s;
  s.sampling_auto.min_confidence = -100;  // off: every suggestion is scored and kept
  s.type_through = false;
  s.rebase_when_idle = false;
  pipeline p(std::move(backend), s);
  std::mt19937 rng(seed);
  std::vector<sample> samples;
  int positions = 0, empty = 0;
  for (const std::string& path : files) {
    const std::string text = read_file(path);
    if (text.empty()) {
      std::fprintf(stderr, "confidence_bench: skipping %s (unreadable)\n", path.c_str());
      continue;
    }
    const std::vector<std::string_view> lines = qf::text::split_lines(text);
    for (int k = 0; k < per_file; ++k) {
      const std::optional<cut_point> cut = random_cut(text, lines, rng);
      if (!cut) continue;
      completion_request req;
      req.uri = "file://" + path;
      req.text = cut->doc;
      req.cursor = {static_cast<int64_t>(cut->line), static_cast<int64_t>(cut->col)};
      req.received = clock::now();
      const completion_result res = p.complete(req, {});
      ++positions;
      if (res.items.empty() || !res.items.front().score) {
        ++empty;
        continue;
      }
      const std::string add = added_text(res.items.front());
      const std::string first(add.substr(0, qf::text::find_line_break(add).pos));
      samples.push_back({*res.items.front().score, !first.empty() && cut->truth.starts_with(first),
                         !first.empty() && qf::cli::byte_similarity(first, cut->truth) >= 0.5});
    }
  }
  std::vector<double> good, bad, close, far;
  for (const sample& x : samples) {
    (x.match ? good : bad).push_back(x.score);
    (x.similar ? close : far).push_back(x.score);
  }
  std::printf("confidence_bench: %s, %d positions, %zu suggestions (%d empty), %zu match the real continuation, "
              "%zu similar to it (edit similarity >= 0.5), seed %u\n",
              p.describe().c_str(), positions, samples.size(), empty, good.size(), close.size(), seed);
  auto row = [](const char* name, const std::vector<double>& v) {
    std::printf("  %-12s n %4zu  score p10 %6.2f  p25 %6.2f  p50 %6.2f  p75 %6.2f  p90 %6.2f\n", name, v.size(),
                quantile(v, 0.1), quantile(v, 0.25), quantile(v, 0.5), quantile(v, 0.75), quantile(v, 0.9));
  };
  row("match", good);
  row("no match", bad);
  row("similar", close);
  row("not similar", far);
  std::printf("  %9s %8s %16s %14s %18s %16s\n", "gate", "shown", "precision(match)", "matches kept",
              "precision(similar)", "similar kept");
  for (double t : {-100.0, -3.0, -2.5, -2.25, -2.0, -1.9, -1.8, -1.7, -1.6, -1.5, -1.4, -1.3, -1.2, -1.1, -1.0,
                   -0.75, -0.5}) {
    int shown = 0, shown_good = 0, shown_close = 0;
    for (const sample& x : samples)
      if (x.score >= t) {
        ++shown;
        shown_good += x.match;
        shown_close += x.similar;
      }
    auto pct = [](double a, double b) { return b > 0 ? 100.0 * a / b : 0.0; };
    std::printf("  %9.2f %7.1f%% %15.1f%% %13.1f%% %17.1f%% %15.1f%%\n", t, pct(shown, double(samples.size())),
                pct(shown_good, shown), pct(shown_good, double(good.size())), pct(shown_close, shown),
                pct(shown_close, double(close.size())));
  }
  return 0;
}

int run_timing(std::unique_ptr<lm_backend> backend, const std::string& file, int runs, int tokens) {
  completion_settings s;
  s.stop_rules = false;
  s.type_through = false;
  s.rebase_when_idle = false;
  s.speculative = false;  // the sampled candidates never speculate; neither does the greedy one here
  s.max_tokens_explicit = tokens;
  s.sampling_explicit.min_confidence = -100;
  pipeline p(std::move(backend), s);
  const std::string text = read_file(file);
  if (text.empty()) {
    std::fprintf(stderr, "confidence_bench: cannot read %s\n", file.c_str());
    return 1;
  }
  const std::vector<std::string_view> lines = qf::text::split_lines(text);
  const int64_t line = static_cast<int64_t>(lines.size() * 2 / 5);
  completion_request req;
  req.uri = "file://" + file;
  req.text = text;
  req.cursor = {line, 0};
  req.explicit_trigger = true;
  auto once = [&](int n) {
    completion_settings c = p.settings();
    if (c.sampling_explicit.candidates != n) {
      c.sampling_explicit.candidates = n;
      p.configure(c);
    }
    req.received = clock::now();
    return p.complete(req, {});
  };
  const completion_result cold = once(1);  // evaluates the prompt; later requests reuse it
  std::vector<double> t1, t3;
  int64_t eval1 = 0, eval3 = 0, gen1 = 0, gen3 = 0;
  for (int r = 0; r < runs; ++r) {
    const completion_result a = once(1), b = once(3);
    t1.push_back(a.metrics.total_ms);
    t3.push_back(b.metrics.total_ms);
    eval1 += a.metrics.tokens_evaluated;
    eval3 += b.metrics.tokens_evaluated;
    gen1 += a.metrics.tokens_generated;
    gen3 += b.metrics.tokens_generated;
  }
  const double m1 = quantile(t1, 0.5), m3 = quantile(t3, 0.5);
  std::printf("confidence_bench --timing: %s, %s line %lld, prompt %lld tokens (cold), %d tokens per candidate, %d runs\n",
              p.describe().c_str(), file.c_str(), static_cast<long long>(line),
              static_cast<long long>(cold.metrics.tokens_evaluated), tokens, runs);
  std::printf("  n = 1: median %.1f ms (min %.1f, max %.1f), prompt tokens evaluated per request %.1f, generated %.1f\n",
              m1, *std::min_element(t1.begin(), t1.end()), *std::max_element(t1.begin(), t1.end()),
              double(eval1) / runs, double(gen1) / runs);
  std::printf("  n = 3: median %.1f ms (min %.1f, max %.1f), prompt tokens evaluated per request %.1f, generated %.1f\n",
              m3, *std::min_element(t3.begin(), t3.end()), *std::max_element(t3.begin(), t3.end()),
              double(eval3) / runs, double(gen3) / runs);
  std::printf("  n = 3 / n = 1: %.2f\n", m1 > 0 ? m3 / m1 : 0.0);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::string model = QF_DEFAULT_MODEL;
  std::vector<std::string> files = default_files();
  int per_file = 12, threads = 2, runs = 7, tokens = 16;
  unsigned seed = 1;
  bool timing = false;
  arg_reader args("confidence_bench", argc, argv);
  while (args.next()) {
    if (args.is("--timing")) timing = true;
    else if (args.is("--model")) model = args.value();
    else if (args.is("--files")) files = args.list_value();
    else if (args.is("--points")) per_file = args.int_value();
    else if (args.is("--threads")) threads = args.int_value();
    else if (args.is("--runs")) runs = std::max(1, args.int_value());
    else if (args.is("--tokens")) tokens = std::max(1, args.int_value());
    else if (args.is("--seed")) seed = args.unsigned_value();
    else {
      std::fprintf(stderr,
                   "usage: confidence_bench [--model F.gguf] [--files a,b] [--points N] [--seed N] [--threads N]\n"
                   "       confidence_bench --timing [--model F.gguf] [--files FILE] [--runs N] [--tokens N]\n");
      return args.usage_status();
    }
  }
  auto backend = load_cpu_backend("confidence_bench", model, threads);
  if (!backend) return 1;
  if (timing) return run_timing(std::move(backend), files.front(), runs, tokens);
  return run_gate(std::move(backend), files, per_file, seed);
}
