// Parse cost per keystroke: a 5,000-line file per grammar (copies of a
// sample), then a user typing a statement on a new line at random places,
// with and without auto-closed brackets; each keystroke is one LSP change
// applied to the document, then edit_between() + ts_tree_edit + incremental
// reparse (timed) and a reader's snapshot (timed separately). Also the first
// full parse, and the syntax_index round trip (changed() until the tree is
// published), which adds the thread hand-off. Prints figures; not a test.
//
//   syntax_bench [--lines 5000] [--keys 2000] [--grammars python,cpp,...] [--big-line-mb 0]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "indexing/syntax_index.h"
#include "indexing/syntax_query.h"
#include "indexing/syntax_tree.h"
#include "syntax_samples.h"

using namespace qf::index;
using namespace qf::text;
using clock_type = std::chrono::steady_clock;

namespace {

double ms_since(clock_type::time_point t) {
  return std::chrono::duration<double, std::milli>(clock_type::now() - t).count();
}

// CPU time of this thread in ms: on a shared machine this is the cost of a
// parse without the time spent waiting for a core.
double thread_cpu_ms() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
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
  const double cpu0 = thread_cpu_ms();
  if (sd.parse({std::chrono::seconds(60)}) != parse_status::parsed) {
    std::printf("%-10s first parse did not finish\n", std::string(sample.grammar).c_str());
    return;
  }
  const double first_ms = ms_since(t0), first_cpu_ms = thread_cpu_ms() - cpu0;
  const std::size_t bytes = doc->text.size(), nlines = doc->lines.line_count();

  // Two ways of typing the statement on a new line (indented like the line
  // above): as an editor with auto-closed brackets and quotes types it (an
  // opener inserts its closer too, typing the closer steps over it; the line
  // is then deleted in one change), and character by character with no
  // auto-closing, backspacing it away (unclosed brackets mid-way: the rest of
  // the file may reparse).
  const std::string stmt = statement_for(sample.grammar);
  for (const bool auto_close : {true, false}) {
    std::vector<double> reparse, reparse_cpu, snap;
    int typed = 0;
    auto apply_change = [&](const text_change& change) {
      auto next = std::make_shared<document>(*doc);
      std::string error;
      if (!next->apply({change}, position_encoding::utf8, &error)) {
        std::fprintf(stderr, "edit failed: %s\n", error.c_str());
        std::exit(1);
      }
      next->version = doc->version + 1;
      const auto start = clock_type::now();
      const double cpu0 = thread_cpu_ms();
      sd.edit(edit_between(*doc, *next, hint_of({change}), position_encoding::utf8), next);
      if (sd.parse({std::chrono::seconds(10)}) != parse_status::parsed) {
        std::fprintf(stderr, "reparse did not finish\n");
        std::exit(1);
      }
      reparse_cpu.push_back(thread_cpu_ms() - cpu0);
      reparse.push_back(ms_since(start));
      const auto s0 = clock_type::now();
      auto reader_copy = sd.snapshot();
      snap.push_back(ms_since(s0));
      doc = next;
      ++typed;
    };
    auto ins = [](std::size_t line, std::size_t col, std::string text) {
      return text_change{text_range{uint32_t(line), uint32_t(col), uint32_t(line), uint32_t(col)}, std::move(text)};
    };
    while (typed < keys) {
      std::size_t line = std::uniform_int_distribution<std::size_t>(0, doc->lines.line_count() - 2)(rng);
      while (doc->lines.line_end(line) == doc->lines.line_start(line) && line + 1 < doc->lines.line_count()) ++line;
      const std::string_view text(doc->text);
      const std::size_t ls = doc->lines.line_start(line), le = doc->lines.line_end(line);
      std::size_t indent = 0;
      while (ls + indent < le && (text[ls + indent] == ' ' || text[ls + indent] == '\t')) ++indent;
      const std::string lead(text.substr(ls, indent));
      const std::size_t col = le - ls;
      apply_change(ins(line, col, "\n" + lead));
      const std::size_t row = line + 1;
      std::size_t cursor = indent;
      std::string pending_closers;  // auto-inserted closers ahead of the cursor
      for (char ch : stmt) {
        const char closer = ch == '(' ? ')' : ch == '[' ? ']' : ch == '{' ? '}' : 0;
        if (auto_close && !pending_closers.empty() && ch == pending_closers.back()) {
          pending_closers.pop_back();  // steps over the auto-inserted closer: no edit
          ++cursor;
          continue;
        }
        std::string piece(1, ch);
        if (auto_close && closer) {
          piece += closer;
          pending_closers.push_back(closer);
        }
        apply_change(ins(row, cursor, piece));
        ++cursor;
      }
      if (auto_close) {
        apply_change(text_change{text_range{uint32_t(line), uint32_t(col), uint32_t(row),
                                            uint32_t(doc->lines.line_end(row) - doc->lines.line_start(row))},
                                 ""});
      } else {
        for (std::size_t i = cursor; i > indent; --i)
          apply_change(text_change{text_range{uint32_t(row), uint32_t(i - 1), uint32_t(row), uint32_t(i)}, ""});
        apply_change(text_change{text_range{uint32_t(line), uint32_t(col), uint32_t(row), uint32_t(indent)}, ""});
      }
    }
    const percentiles r = summarize(reparse), c = summarize(reparse_cpu), s = summarize(snap);
    std::printf("%-10s %6zu lines %8zu bytes  first parse %7.2f ms (cpu %.2f)  %-22s keystroke reparse wall p50 %.3f "
                "p90 %.3f p99 %.3f max %.3f ms | cpu p50 %.3f p90 %.3f p99 %.3f max %.3f ms (%zu keys)  snapshot "
                "p99 %.4f ms\n",
                std::string(sample.grammar).c_str(), nlines, bytes, first_ms, first_cpu_ms,
                auto_close ? "auto-closed brackets:" : "unclosed while typing:", r.p50, r.p90, r.p99, r.max, c.p50,
                c.p90, c.p99, c.max, reparse.size(), s.p99);
    std::fflush(stdout);
  }

  // Keystrokes through the index: changed() until latest() has the version
  // (adds the hand-off to the syntax thread). A space typed at the end of a
  // random line, then removed.
  syntax_index idx;
  idx.opened(doc);
  idx.wait_idle();
  std::vector<double> round_trip;
  for (int i = 0; i < std::min(keys, 400); ++i) {
    const std::size_t line = std::uniform_int_distribution<std::size_t>(0, doc->lines.line_count() - 2)(rng);
    const uint32_t col = uint32_t(doc->lines.line_end(line) - doc->lines.line_start(line));
    text_change add{text_range{uint32_t(line), col, uint32_t(line), col}, " "};
    text_change remove{text_range{uint32_t(line), col, uint32_t(line), col + 1}, ""};
    for (const text_change& change : {add, remove}) {
      auto next = std::make_shared<document>(*doc);
      std::string error;
      if (!next->apply({change}, position_encoding::utf8, &error)) break;
      next->version = doc->version + 1;
      const auto start = clock_type::now();
      idx.changed(doc, next, {change}, position_encoding::utf8);
      idx.wait_idle();
      round_trip.push_back(ms_since(start));
      doc = next;
    }
  }
  const percentiles rt = summarize(round_trip);
  std::printf("%-10s index round trip (changed() -> published) p50 %.3f p90 %.3f p99 %.3f ms (%zu keys), state %s\n",
              std::string(sample.grammar).c_str(), rt.p50, rt.p90, rt.p99, round_trip.size(),
              syntax_state_name(idx.state(doc->uri)));
  std::fflush(stdout);
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
  const double cpu0 = thread_cpu_ms();
  const parse_status st = sd.parse({std::chrono::seconds(120)});
  std::printf("one %zu MB line (javascript): full parse %s in %.0f ms (cpu %.0f ms)\n", mb, parse_status_name(st),
              ms_since(t0), thread_cpu_ms() - cpu0);
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
