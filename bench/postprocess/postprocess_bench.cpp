// postprocess_bench: how many suggestions leave a file parseable, with and
// without the syntax rules of post-processing, and what post-processing
// costs per suggestion.
//
// For each file, cursor positions are sampled (a random line with some
// code, cut in its middle; the rest of that line is removed, so the model is
// asked for it). The model generates a fixed number of tokens greedily with
// no stop rules (the raw suggestion); that text is then post-processed
// exactly as the pipeline does it: streamed through the stop checker, then
// finalized without a grammar (line rules, repetition, closers, bracket
// balance: what a language without a grammar gets) and with the file's
// grammar (the syntax rules on top). Each variant is inserted at the cursor
// and the whole file parsed: "no new errors" means it has no more error
// nodes than the file without the suggestion; "clean" means none at all
// (counted over positions in files that parse cleanly). The cost is the CPU
// time of stop checking + finalize per suggestion. --dump FILE writes every
// position's raw and post-processed texts, to compare two builds' rules.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "bench/bench_args.h"
#include "bench/bench_stats.h"
#include "bench/completion_bench.h"
#include "indexing/syntax_check.h"
#include "indexing/syntax_language.h"
#include "server/completion/pipeline/pipeline.h"
#include "server/completion/postprocess/cleanup.h"
#include "server/completion/postprocess/stop_rules.h"
#include "server/completion/postprocess/syntax_rules.h"
#include "server/completion/postprocess/trigger.h"
#include "text/lines.h"

using namespace qf::server;
using namespace qf::server::completion;
using namespace qf::bench;
namespace fs = std::filesystem;

namespace {

std::vector<std::string> default_files() {
  const std::string src = QF_SOURCE_DIR;
  const std::string nm = src + "/indexing/grammars/node_modules";
  std::vector<std::string> out;
  for (const char* f : {"jwt/algorithms.py", "jwt/api_jws.py", "jwt/api_jwt.py", "yaml/constructor.py", "yaml/emitter.py",
                        "yaml/scanner.py", "yaml/representer.py", "yaml/parser.py"})
    out.push_back(std::string("/usr/lib/python3/dist-packages/") + f);
  for (const char* f : {"lexer.c", "node.c", "tree_cursor.c", "stack.c", "get_changed_ranges.c", "subtree.c", "language.c",
                        "tree.c"})
    out.push_back(nm + "/tree-sitter/vendor/tree-sitter/lib/src/" + f);
  for (const char* g : {"python", "javascript", "go", "c", "cpp", "rust", "java", "typescript/common/define-grammar"})
    out.push_back(nm + "/tree-sitter-" + std::string(g) + (std::string(g).find('/') == std::string::npos ? "/grammar.js" : ".js"));
  for (const char* f : {"extension.ts", "config.ts", "inline.ts", "status.ts"}) out.push_back(src + "/editors/vscode/src/" + f);
  for (const char* f : {"main.go", "client.go", "socket.go", "proxy.go"})
    out.push_back(std::string("/usr/share/doc/git/contrib/persistent-https/") + f);
  return out;
}

std::optional<std::size_t> file_errors(const qf::index::syntax_language& lang, const std::string& text) {
  auto r = qf::index::check_syntax(lang, text, {0, 0}, 0, 0, std::chrono::seconds(5));
  if (!r) return std::nullopt;
  return r->errors();
}

struct variant_stats {
  int no_new_errors = 0, clean = 0;
  double chars = 0;
};

}  // namespace

int main(int argc, char** argv) {
  std::string model = QF_DEFAULT_MODEL;
  std::vector<std::string> files = default_files();
  int per_file = 6, tokens = 48, threads = 2;
  unsigned seed = 1;
  std::string dump_path;
  arg_reader args("postprocess_bench", argc, argv);
  while (args.next()) {
    if (args.is("--model")) model = args.value();
    else if (args.is("--files")) files = args.list_value();
    else if (args.is("--points")) per_file = args.int_value();
    else if (args.is("--tokens")) tokens = args.int_value();
    else if (args.is("--threads")) threads = args.int_value();
    else if (args.is("--seed")) seed = args.unsigned_value();
    else if (args.is("--dump")) dump_path = args.value();
    else {
      std::fprintf(stderr,
                   "usage: postprocess_bench [--model F.gguf] [--files a,b] [--points N] [--tokens N] [--seed N] "
                   "[--dump FILE]\n");
      return args.usage_status();
    }
  }
  auto backend = load_cpu_backend("postprocess_bench", model, threads);
  if (!backend) return 1;
  completion_settings raw_settings;
  raw_settings.stop_rules = false;
  raw_settings.type_through = false;
  raw_settings.rebase_when_idle = false;
  raw_settings.max_tokens_explicit = tokens;
  pipeline p(std::move(backend), raw_settings);
  const completion_settings rules;  // defaults: stop rules on

  std::ofstream dump;
  if (!dump_path.empty()) {
    dump.open(dump_path, std::ios::binary);
    if (!dump) {
      std::fprintf(stderr, "postprocess_bench: cannot write %s\n", dump_path.c_str());
      return 1;
    }
  }
  std::mt19937 rng(seed);
  std::map<std::string, int> per_language;
  variant_stats raw, line_only, syntax;
  int cases = 0, clean_files_cases = 0, timeouts = 0, error_cuts = 0, block_cuts = 0;
  std::vector<double> cost_line_us, cost_syntax_us, parses;
  for (const std::string& path : files) {
    const qf::index::syntax_language* lang = qf::index::find_syntax_language("", path);
    const std::string text = read_file(path);
    if (!lang || text.empty()) {
      std::fprintf(stderr, "postprocess_bench: skipping %s (%s)\n", path.c_str(), lang ? "unreadable" : "no grammar");
      continue;
    }
    const std::optional<std::size_t> original_errors = file_errors(*lang, text);
    const bool file_clean = original_errors && *original_errors == 0;
    const std::vector<std::string_view> lines = qf::text::split_lines(text);
    for (int k = 0; k < per_file; ++k) {
      const std::optional<cut_point> cut = random_cut(text, lines, rng);
      if (!cut) continue;
      const std::string& doc = cut->doc;
      const std::size_t line = cut->line, col = cut->col, cursor = cut->offset;
      const std::optional<std::size_t> base_errors = file_errors(*lang, doc);
      if (!base_errors) continue;

      completion_request req;
      req.uri = "file://" + path;
      req.text = doc;
      req.cursor = {static_cast<int64_t>(line), static_cast<int64_t>(col)};
      req.explicit_trigger = true;
      req.received = clock::now();
      const completion_result res = p.complete(req, {});
      const std::string gen = res.items.empty() ? std::string() : added_text(res.items.front());
      // Post-processing as the pipeline does it, timed.
      const cursor_context cx = make_cursor_context(doc, req.cursor.line, req.cursor.byte_col);
      const trigger_decision d = decide_trigger(cx, true, rules);
      auto streamed = [&]() {
        stop_checker sc(cx, d, true);
        for (char ch : gen)
          if (sc.push(std::string_view(&ch, 1))) break;
        return sc.kept();
      };
      auto t0 = qf::index::thread_cpu_time();
      const std::string out_line = finalize(streamed(), cx, d, true);
      auto t1 = qf::index::thread_cpu_time();
      const syntax_window w = make_syntax_window(doc, cursor, lang);
      syntax_trim_stats st;
      const std::string out_syntax = finalize(streamed(), cx, d, true, &w, &st);
      auto t2 = qf::index::thread_cpu_time();
      cost_line_us.push_back(static_cast<double>((t1 - t0).count()));
      cost_syntax_us.push_back(static_cast<double>((t2 - t1).count()));
      parses.push_back(st.parses);
      timeouts += st.timed_out;
      error_cuts += st.error_cut;
      block_cuts += st.block_cut;

      ++cases;
      ++per_language[std::string(lang->name)];
      clean_files_cases += file_clean;
      auto score = [&](variant_stats& vs, const std::string& s) {
        const std::optional<std::size_t> e = file_errors(*lang, doc.substr(0, cursor) + s + doc.substr(cursor));
        vs.chars += static_cast<double>(s.size());
        if (e && *e <= *base_errors) ++vs.no_new_errors;
        if (file_clean && e && *e == 0) ++vs.clean;
      };
      score(raw, gen);
      score(line_only, out_line);
      score(syntax, out_syntax);
      if (dump)
        dump << "== " << path << ':' << line + 1 << ':' << col + 1 << "\n-- raw\n" << gen << "\n-- line rules\n"
             << out_line << "\n-- line + syntax rules\n" << out_syntax << '\n';
    }
  }
  if (!cases) {
    std::puts("postprocess_bench: no usable positions");
    return 1;
  }
  std::printf("postprocess_bench: %s, %d positions (%d in files that parse cleanly), %d tokens per raw suggestion, seed %u\n",
              p.describe().c_str(), cases, clean_files_cases, tokens, seed);
  std::printf("  positions per grammar:");
  for (const auto& [name, n] : per_language) std::printf(" %s %d", name.c_str(), n);
  std::printf("\n  %-34s %16s %22s %12s\n", "variant", "no new errors", "clean (clean files)", "mean chars");
  auto row = [&](const char* name, const variant_stats& vs) {
    std::printf("  %-34s %8d (%5.1f%%) %12d (%5.1f%%) %12.1f\n", name, vs.no_new_errors, 100.0 * vs.no_new_errors / cases,
                vs.clean, clean_files_cases ? 100.0 * vs.clean / clean_files_cases : 0.0, vs.chars / cases);
  };
  row("raw (no post-processing)", raw);
  row("line rules (no grammar)", line_only);
  row("line + syntax rules", syntax);
  std::printf("  syntax rules: error cut in %d, block end cut in %d, budget ran out in %d of %d\n", error_cuts, block_cuts,
              timeouts, cases);
  std::printf("  post-processing CPU per suggestion: line rules p50 %.0f us p99 %.0f us; with syntax rules p50 %.0f us "
              "p99 %.0f us (parses p50 %.0f, p99 %.0f)\n",
              quantile(cost_line_us, 0.5), quantile(cost_line_us, 0.99), quantile(cost_syntax_us, 0.5),
              quantile(cost_syntax_us, 0.99), quantile(parses, 0.5), quantile(parses, 0.99));
  return 0;
}
