// Parse cost per keystroke: a 5,000-line file per grammar (copies of a
// sample), then a user typing statements character by character and
// backspacing them away at random places; each keystroke is one LSP change
// applied to the document, edit_between() + ts_tree_edit + incremental
// reparse (timed), and a reader's snapshot (timed separately). Also the first
// full parse, and the syntax_index round trip (changed() until the tree is
// published) which adds the thread hand-off. Prints figures; not a test.
//
//   syntax_bench [--lines 5000] [--keys 2000] [--grammars python,cpp,...] [--big-line-mb 0]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "indexing/syntax_index.h"
#include "indexing/syntax_query.h"
#include "indexing/syntax_tree.h"
#include "syntax_samples.h"

using namespace qf::index;
using clock_type = std::chrono::steady_clock;

namespace {

double ms_since(clock_type::time_point t) {
  return std::chrono::duration<double, std::milli>(clock_type::now() - t).count();
}

struct percentiles {
  double p50, p90, p99, max;
};
percentiles summarize(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  auto at = [&](double q) { return v[std::min(v.size() - 1, static_cast<std::size_t>(q * (v.size() - 1) + 0.5))]; };
  return {at(0.50), at(0.90), at(0.99), v.back()};
}

std::string repeat_to_lines(std::string_view sample, std::size_t lines) {
  std::string out;
  std::size_t n = 0;
  while (n < lines) {
    out += sample;
    out += '\n';
    n += static_cast<std::size_t>(std::count(sample.begin(), sample.end(), '\n')) + 1;
  }
  return out;
}

// What is typed: one statement, a character at a time.
const char* statement_for(std::string_view grammar) {
  if (grammar == "python") return "result = compute(items[i], limit=4)";
  if (grammar == "go") return "result := compute(items[i], 4)";
  if (grammar == "rust") return "let result = compute(&items[i], 4);";
  return "auto_result = compute(items[i], 4);";
}

void bench_grammar(const qf::test::syntax_sample& sample, std::size_t lines, int keys, std::mt19937& rng) {
  const syntax_language* lang = syntax_language_named(sample.grammar);
  if (!lang) {
    std::printf("%-10s (grammar not built)\n", std::string(sample.grammar).c_str());
    return;
  }
  auto doc = std::make_shared<const document>(std::string(sample.uri), std::string(sample.language_id), 1,
                                              repeat_to_lines(sample.source, lines));
  syntax_document sd(*lang);
  sd.reset(doc);
  auto t0 = clock_type::now();
  if (sd.parse({std::chrono::seconds(60)}) != parse_status::parsed) {
    std::printf("%-10s first parse did not finish\n", std::string(sample.grammar).c_str());
    return;
  }
  const double first_ms = ms_since(t0);
  const std::size_t bytes = doc->text.size(), nlines = doc->lines.line_count();

  std::vector<double> reparse, snap;
  const std::string stmt = statement_for(sample.grammar);
  int typed = 0;
  while (typed < keys) {
    // Somewhere in the file: the end of a random non-empty line, then a new
    // line with the statement typed out and backspaced away again.
    std::size_t line = std::uniform_int_distribution<std::size_t>(0, doc->lines.line_count() - 2)(rng);
    while (doc->lines.line_end(line) == doc->lines.line_start(line) && line + 1 < doc->lines.line_count()) ++line;
    const std::size_t col = doc->lines.line_end(line) - doc->lines.line_start(line);
    std::vector<text_change> script;
    script.push_back({text_range{uint32_t(line), uint32_t(col), uint32_t(line), uint32_t(col)}, "\n    "});
    for (std::size_t i = 0; i < stmt.size(); ++i)
      script.push_back({text_range{uint32_t(line + 1), uint32_t(4 + i), uint32_t(line + 1), uint32_t(4 + i)},
                        std::string(1, stmt[i])});
    for (std::size_t i = stmt.size(); i > 0; --i)
      script.push_back({text_range{uint32_t(line + 1), uint32_t(4 + i - 1), uint32_t(line + 1), uint32_t(4 + i)}, ""});
    script.push_back({text_range{uint32_t(line), uint32_t(col), uint32_t(line + 1), 4}, ""});
    for (const auto& change : script) {
      auto next = std::make_shared<document>(*doc);
      std::string error;
      if (!next->apply({change}, position_encoding::utf8, &error)) {
        std::fprintf(stderr, "edit failed: %s\n", error.c_str());
        std::exit(1);
      }
      next->version = doc->version + 1;
      const auto start = clock_type::now();
      sd.edit(edit_between(*doc, *next, hint_of({change}), position_encoding::utf8), next);
      if (sd.parse({std::chrono::seconds(10)}) != parse_status::parsed) {
        std::fprintf(stderr, "reparse did not finish\n");
        std::exit(1);
      }
      reparse.push_back(ms_since(start));
      const auto s0 = clock_type::now();
      auto reader_copy = sd.snapshot();
      snap.push_back(ms_since(s0));
      doc = next;
      ++typed;
    }
  }
  const percentiles r = summarize(reparse), s = summarize(snap);

  // The same typing through the index: changed() until latest() has the version.
  syntax_index idx;
  idx.opened(doc);
  idx.wait_idle();
  std::vector<double> round_trip;
  for (int i = 0; i < std::min(keys, 500); ++i) {
    const std::size_t line = std::uniform_int_distribution<std::size_t>(0, doc->lines.line_count() - 2)(rng);
    text_change change{text_range{uint32_t(line), 0, uint32_t(line), 0}, i % 2 ? "" : " "};
    if (i % 2) change.range->end_character = 1;  // take the space away again
    auto next = std::make_shared<document>(*doc);
    std::string error;
    if (!next->apply({change}, position_encoding::utf8, &error)) continue;
    next->version = doc->version + 1;
    const auto start = clock_type::now();
    idx.changed(doc, next, {change}, position_encoding::utf8);
    idx.wait_idle();
    round_trip.push_back(ms_since(start));
    doc = next;
  }
  const percentiles rt = summarize(round_trip);
  std::printf("%-10s %6zu lines %8zu bytes  first parse %7.2f ms  keystroke reparse p50 %.3f p90 %.3f p99 %.3f max "
              "%.3f ms (%zu keys)  snapshot p99 %.4f ms  index round trip p50 %.3f p99 %.3f ms\n",
              std::string(sample.grammar).c_str(), nlines, bytes, first_ms, r.p50, r.p90, r.p99, r.max, reparse.size(),
              s.p99, rt.p50, rt.p99);
}

void bench_big_line(std::size_t mb) {
  const syntax_language* lang = syntax_language_named("javascript");
  if (!lang || mb == 0) return;
  std::string text = "var a = [";
  while (text.size() < (mb << 20)) text += "1234567, 'abcdefgh', x.y(z), ";
  text += "0];";
  auto doc = std::make_shared<const document>("file:///big.js", "javascript", 1, std::move(text));
  syntax_document sd(*lang);
  sd.reset(doc);
  auto t0 = clock_type::now();
  const parse_status st = sd.parse({std::chrono::seconds(120)});
  std::printf("one %zu MB line (javascript): full parse %s in %.0f ms\n", mb, parse_status_name(st), ms_since(t0));
}

}  // namespace

int main(int argc, char** argv) {
  std::size_t lines = 5000, big_mb = 0;
  int keys = 2000;
  std::string grammars = "python,cpp,c,javascript,typescript,tsx,go,rust,java";
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--lines")) lines = std::strtoul(argv[i + 1], nullptr, 10);
    else if (!std::strcmp(argv[i], "--keys")) keys = std::atoi(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--grammars")) grammars = argv[i + 1];
    else if (!std::strcmp(argv[i], "--big-line-mb")) big_mb = std::strtoul(argv[i + 1], nullptr, 10);
    else {
      std::fprintf(stderr, "usage: syntax_bench [--lines N] [--keys N] [--grammars a,b] [--big-line-mb N]\n");
      return 2;
    }
  }
  std::mt19937 rng(42);
  for (const auto& sample : qf::test::syntax_samples()) {
    const std::string name(sample.grammar);
    if (("," + grammars + ",").find("," + name + ",") == std::string::npos) continue;
    bench_grammar(sample, lines, keys, rng);
  }
  bench_big_line(big_mb);
  return 0;
}
