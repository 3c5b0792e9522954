// large_file_keystrokes: what one keystroke costs in a very large document.
//
// Starts the real quickfill binary, opens a generated document of --mb MiB
// (one single line, like minified code, or many short lines), then types
// --keys characters into it: per keystroke an incremental didChange and an
// automatic inline completion at the new cursor, waiting for the answer
// before the next keystroke. It prints the didOpen cost, the round trip of
// each keystroke (didChange sent -> completion answered) as p50 / max, the
// server's CPU time per keystroke (all its threads; steadier than the wall
// clock on a shared machine) and its RSS. A keystroke in a 10 MiB file should cost what it costs in a
// small one: the server works on a window around the cursor.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "bench/bench_args.h"
#include "bench/soak/lsp_session.h"

namespace json = boost::json;
using bclock = std::chrono::steady_clock;
using namespace std::chrono_literals;

namespace {

struct options {
  std::string quickfill = QUICKFILL_BINARY;
  std::string model = QUICKFILL_SOURCE_DIR "/models/quickfill-tiny-code.gguf";
  double mib = 10;
  std::vector<std::string> shapes = {"single", "lines"};
  std::vector<std::string> wheres = {"end", "middle"};
  int keys = 20;
  bool edits_only = false;  // didChange + quickfill/status: the cost of an edit alone
  std::string log = "large_file_keystrokes.server.log";
};

void usage() {
  std::puts(
      "usage: large_file_keystrokes [--quickfill BIN] [--model FILE.gguf] [--mb N] [--shape single|lines|both]\n"
      "         [--where end|middle|both] [--keys N] [--edits-only] [--log FILE]\n"
      "  --edits-only: each keystroke is a didChange and a quickfill/status round trip (no completion),\n"
      "  which times what an edit costs the dispatcher (document store, positions) without the pipeline.");
}

double ms(bclock::time_point a, bclock::time_point b) { return std::chrono::duration<double, std::milli>(b - a).count(); }

std::vector<std::string> choice(const std::string& v, std::vector<std::string> both) {
  if (v == "both") return both;
  return {v};
}

// Code-like text: statements with a non-ASCII character now and then, so that
// UTF-16 positions differ from byte offsets. `line_len` 0: one single line.
std::string make_text(std::size_t bytes, std::size_t line_len) {
  std::string out;
  out.reserve(bytes + 64);
  std::size_t line_start = 0;
  for (unsigned i = 0; out.size() < bytes; ++i) {
    char stmt[64];
    std::snprintf(stmt, sizeof stmt, "v%u=f(v%u,%u);", i, i / 3, (i * 7919u) % 1000u);
    out += stmt;
    if (i % 97 == 0) out += "/*\xc3\xa9*/";
    if (line_len && out.size() - line_start >= line_len) {
      out += '\n';
      line_start = out.size();
    }
  }
  return out;
}

int64_t utf16_len(std::string_view s) {
  int64_t n = 0;
  for (unsigned char c : s) {
    if ((c & 0xC0) == 0x80) continue;
    n += c >= 0xF0 ? 2 : 1;
  }
  return n;
}

json::object pos(int64_t line, int64_t ch) { return json::object{{"line", line}, {"character", ch}}; }

int run_shape(const options& o, const std::string& shape, const std::string& where) {
  const std::size_t bytes = static_cast<std::size_t>(o.mib * 1024 * 1024);
  const std::string text = make_text(bytes, shape == "single" ? 0 : 60);
  // The cursor: the end of the document, or the middle (of the line, or the middle line's end).
  std::size_t cur = text.size();
  if (where == "middle") {
    cur = text.size() / 2;
    if (shape != "single") cur = text.find('\n', cur);
    while (cur > 0 && (static_cast<unsigned char>(text[cur]) & 0xC0) == 0x80) --cur;
  }
  const std::size_t nl = cur == 0 ? std::string::npos : text.rfind('\n', cur - 1);
  const std::size_t line_start = nl == std::string::npos ? 0 : nl + 1;
  const int64_t line = std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(line_start), '\n');
  int64_t ch = utf16_len(std::string_view(text).substr(line_start, cur - line_start));

  qf::bench::lsp_session s;
  std::string error;
  if (!s.start({o.quickfill, "--stdio", "--no-daemon", "--model", o.model, "--log-file", o.log, "--log-level", "info"}, "", &error)) {
    std::fprintf(stderr, "cannot start %s: %s\n", o.quickfill.c_str(), error.c_str());
    return 1;
  }
  if (!s.call("initialize", json::object{{"processId", nullptr}, {"rootUri", nullptr}, {"capabilities", json::object{}}},
              30s)) {
    std::fprintf(stderr, "no answer to initialize\n");
    return 1;
  }
  s.notify("initialized", json::object{});
  for (int i = 0; i < 600; ++i) {
    auto st = s.call("quickfill/status", nullptr, 10s);
    if (!st) break;
    const json::value* r = st->as_object().if_contains("result");
    if (r && r->as_object().at("modelLoaded").as_bool()) break;
    if (r && !r->as_object().at("modelLoading").as_bool()) {
      std::fprintf(stderr, "no model loaded (%s)\n", o.model.c_str());
      return 1;
    }
    std::this_thread::sleep_for(50ms);
  }
  const std::string uri = "file:///large/" + shape + ".js";
  const auto t_open = bclock::now();
  s.notify("textDocument/didOpen",
           json::object{{"textDocument",
                         json::object{{"uri", uri}, {"languageId", "javascript"}, {"version", 1}, {"text", text}}}});
  if (!s.call("quickfill/status", nullptr, 300s)) {
    std::fprintf(stderr, "no answer after didOpen\n");
    return 1;
  }
  const double open_ms = ms(t_open, bclock::now());
  const int64_t rss_open = qf::bench::rss_kib(s.pid());

  std::vector<double> rt;
  int answered = 0, with_items = 0;
  const double cpu0 = qf::bench::cpu_ms(s.pid());
  const std::string typed = "x=g(1);";
  for (int k = 0; k < o.keys; ++k) {
    const std::string c(1, typed[static_cast<std::size_t>(k) % typed.size()]);
    const auto t0 = bclock::now();
    s.notify("textDocument/didChange",
             json::object{{"textDocument", json::object{{"uri", uri}, {"version", k + 2}}},
                          {"contentChanges", json::array{json::object{
                                                 {"range", json::object{{"start", pos(line, ch)}, {"end", pos(line, ch)}}},
                                                 {"text", c}}}}});
    ++ch;
    auto r = o.edits_only ? s.call("quickfill/status", nullptr, 120s)
                          : s.call("textDocument/inlineCompletion",
                                   json::object{{"textDocument", json::object{{"uri", uri}}},
                                                {"position", pos(line, ch)},
                                                {"context", json::object{{"triggerKind", 2}}}},
                                   120s);
    rt.push_back(ms(t0, bclock::now()));
    if (!r) {
      std::fprintf(stderr, "keystroke %d: no answer\n", k);
      return 1;
    }
    if (const json::value* res = r->as_object().if_contains("result")) {
      ++answered;
      if (const json::value* items = res->as_object().if_contains("items"); items && !items->as_array().empty())
        ++with_items;
    }
  }
  const double cpu_per_key = (qf::bench::cpu_ms(s.pid()) - cpu0) / o.keys;
  const int64_t rss_end = qf::bench::rss_kib(s.pid());
  const int code = s.finish(30s);
  std::vector<double> sorted = rt;
  std::sort(sorted.begin(), sorted.end());
  std::printf(
      "%-6s %-6s %5.1f MiB: didOpen %7.1f ms | keystroke p50 %7.1f ms, max %7.1f ms, server CPU %6.1f ms/key (%d "
      "keys, %d answered, %d with items) | RSS after open %lld KiB, at end %lld KiB | exit %d\n",
      shape.c_str(), where.c_str(), static_cast<double>(text.size()) / (1024.0 * 1024.0), open_ms,
      sorted[sorted.size() / 2], sorted.back(), cpu_per_key, o.keys, answered, with_items,
      static_cast<long long>(rss_open),
      static_cast<long long>(rss_end), code);
  std::fflush(stdout);
  return code == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  options o;
  qf::bench::arg_reader args("large_file_keystrokes", argc, argv);
  while (args.next()) {
    if (args.is("--quickfill")) o.quickfill = args.value();
    else if (args.is("--model")) o.model = args.value();
    else if (args.is("--mb")) o.mib = args.double_value();
    else if (args.is("--shape")) o.shapes = choice(args.value(), {"single", "lines"});
    else if (args.is("--where")) o.wheres = choice(args.value(), {"end", "middle"});
    else if (args.is("--keys")) o.keys = std::max(1, args.int_value());
    else if (args.is("--edits-only")) o.edits_only = true;
    else if (args.is("--log")) o.log = args.value();
    else {
      usage();
      return args.usage_status();
    }
  }
  int rc = 0;
  for (const auto& shape : o.shapes)
    for (const auto& where : o.wheres) rc |= run_shape(o, shape, where);
  return rc;
}
