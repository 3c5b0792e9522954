// soak: does the server's memory stay flat over a long editing session?
//
// Starts the real quickfill binary (bundled tiny model by default), opens
// --docs documents (the examples/ samples and generated code) and, for
// --minutes, edits them at random the way a user does: typing characters,
// new lines, deleting, pasting and removing lines, jumping elsewhere,
// switching documents, now and then closing and reopening one; after each
// edit a completion or inline completion request at the cursor, sometimes
// cancelled at once. Every --sample-s seconds it reads the server's VmRSS
// (/proc/PID/status). At the end it prints the samples, the slope of a least
// squares line through the samples after the warm-up (the first third by
// default) in KiB/min, and PASS when the slope is at most --max-slope. Next to
// each sample it shows the chunk-tokenizer cache's size as the server logs it
// (a bounded cache that fills slowly raises the slope without being a leak).
// Positions are negotiated as UTF-8 and the texts are ASCII, so columns are
// bytes on both sides.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "bench/bench_args.h"
#include "bench/soak/lsp_session.h"
#include "server/completion/prompt/chunk_tokenizer.h"

namespace json = boost::json;
using bclock = std::chrono::steady_clock;
using namespace std::chrono_literals;

namespace {

struct options {
  std::string quickfill = QUICKFILL_BINARY;
  std::string model = QUICKFILL_SOURCE_DIR "/models/quickfill-tiny-code.gguf";
  double minutes = 30;
  double sample_s = 10;
  double warmup_frac = 1.0 / 3.0;
  double max_slope = 64;  // KiB/min
  int docs = 4;
  int interval_ms = 20;
  unsigned seed = 1;
  std::string log = "soak.server.log";
};

// Where the server's threads are when it stops answering: gdb's backtraces
// (when gdb is installed and may attach) to stdout.
void dump_stacks(int pid) {
  const std::string cmd = "gdb -p " + std::to_string(pid) +
                          " -batch -nx -ex 'set pagination off' -ex 'thread apply all bt' 2>&1";
  std::printf("# thread stacks of pid %d (%s)\n", pid, cmd.c_str());
  std::fflush(stdout);
  if (std::system(cmd.c_str()) != 0) std::printf("# gdb could not attach\n");
  std::fflush(stdout);
}

void usage() {
  std::puts(
      "usage: soak [--minutes M (30)] [--sample-s S (10)] [--warmup-frac F (0.333)] [--max-slope KIB_PER_MIN (64)]\n"
      "            [--docs N (4)] [--interval-ms N (20)] [--seed N] [--quickfill BIN] [--model FILE.gguf] [--log FILE]");
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

struct doc {
  std::string uri;
  std::string language;
  std::string text;
  int64_t version = 1;
  bool open = false;
  size_t cursor = 0;  // byte offset
};

// Line and byte column of a byte offset.
json::object pos_of(const std::string& text, size_t off) {
  int64_t line = 0;
  size_t start = 0;
  for (size_t i = 0; i < off; ++i)
    if (text[i] == '\n') {
      ++line;
      start = i + 1;
    }
  return json::object{{"line", line}, {"character", static_cast<int64_t>(off - start)}};
}

class session_driver {
 public:
  session_driver(const options& o, qf::bench::lsp_session& s) : s_(s), rng_(o.seed) {}

  void add(doc d) { docs_.push_back(std::move(d)); }

  void open(doc& d) {
    d.version = 1;
    s_.notify("textDocument/didOpen",
              json::object{{"textDocument", json::object{{"uri", d.uri},
                                                         {"languageId", d.language},
                                                         {"version", d.version},
                                                         {"text", d.text}}}});
    d.open = true;
  }

  // One user action and the completion request after it; false when the server stopped answering.
  bool step() {
    doc& d = docs_[current_];
    const int action = pick(100);
    if (action < 3) {  // switch to another document
      current_ = static_cast<size_t>(pick(static_cast<int>(docs_.size())));
      return true;
    }
    if (action < 4) {  // close and reopen
      s_.notify("textDocument/didClose", json::object{{"textDocument", json::object{{"uri", d.uri}}}});
      open(d);
      ++reopens_;
      return true;
    }
    if (action < 10) {  // jump elsewhere (to a line start)
      d.cursor = d.text.empty() ? 0 : static_cast<size_t>(pick(static_cast<int>(d.text.size())));
      size_t nl = d.cursor == 0 ? std::string::npos : d.text.rfind('\n', d.cursor - 1);
      d.cursor = nl == std::string::npos ? 0 : nl + 1;
    }
    // An edit at the cursor: mostly typing; documents stay around their size.
    std::string insert;
    size_t erase = 0;
    const bool too_big = d.text.size() > base_size_ * 2;
    const int kind = pick(100);
    if (kind < 60 && !too_big) {
      static const char k_chars[] = "abcdefghijklmnopqrstuvwxyz_ ().,=+:0123456789";
      insert = std::string(1, k_chars[pick(sizeof k_chars - 1)]);
    } else if (kind < 68 && !too_big) {
      insert = "\n    ";
    } else if (kind < 73 && !too_big) {  // paste a line from elsewhere in the document
      size_t from = static_cast<size_t>(pick(static_cast<int>(d.text.size() + 1)));
      size_t a = d.text.rfind('\n', from == 0 ? 0 : from - 1);
      a = a == std::string::npos ? 0 : a + 1;
      size_t b = d.text.find('\n', a);
      insert = d.text.substr(a, b == std::string::npos ? std::string::npos : b + 1 - a);
    } else if (kind < 78) {  // delete the rest of the line
      size_t b = d.text.find('\n', d.cursor);
      erase = (b == std::string::npos ? d.text.size() : b + 1) - d.cursor;
    } else {  // backspace
      if (d.cursor > 0) {
        --d.cursor;
        erase = 1;
      }
    }
    if (insert.empty() && erase == 0) return true;
    json::object range{{"start", pos_of(d.text, d.cursor)}, {"end", pos_of(d.text, d.cursor + erase)}};
    d.text.replace(d.cursor, erase, insert);
    d.cursor += insert.size();
    s_.notify("textDocument/didChange",
              json::object{{"textDocument", json::object{{"uri", d.uri}, {"version", ++d.version}}},
                           {"contentChanges", json::array{json::object{{"range", range}, {"text", insert}}}}});
    ++edits_;
    const bool inline_kind = pick(2) == 0;
    json::object params{{"textDocument", json::object{{"uri", d.uri}}}, {"position", pos_of(d.text, d.cursor)}};
    params["context"] = json::object{{"triggerKind", inline_kind ? 2 : (pick(10) == 0 ? 1 : 2)}};
    const int64_t id = s_.request(inline_kind ? "textDocument/inlineCompletion" : "textDocument/completion", params);
    if (pick(8) == 0) {
      s_.notify("$/cancelRequest", json::object{{"id", id}});
      ++cancels_;
    }
    auto r = s_.wait(id, 60s);
    if (!r) return false;
    ++requests_;
    if (r->as_object().contains("error")) ++errors_;
    return true;
  }

  void set_base_size() {
    for (const auto& d : docs_) base_size_ = std::max(base_size_, d.text.size());
  }
  int pick(int n) { return std::uniform_int_distribution<int>(0, n - 1)(rng_); }
  std::vector<doc>& docs() { return docs_; }
  int64_t edits_ = 0, requests_ = 0, errors_ = 0, cancels_ = 0, reopens_ = 0;

 private:
  qf::bench::lsp_session& s_;
  std::mt19937 rng_;
  std::vector<doc> docs_;
  size_t current_ = 0;
  size_t base_size_ = 0;
};

// The server's own figure for its chunk-tokenizer cache: the last "chunk cache
// N entries, X MiB" line of its log (written every 1024 completions), read on
// from where the previous call stopped. -1 until one was seen.
class cache_figure {
 public:
  explicit cache_figure(std::string path) : path_(std::move(path)) {}
  double kib() {
    std::ifstream in(path_, std::ios::binary);
    if (!in) return last_;
    in.seekg(static_cast<std::streamoff>(pos_));
    std::string line;
    while (std::getline(in, line)) {
      if (in.eof()) break;  // a line still being written: read it next time
      pos_ += line.size() + 1;
      const size_t at = line.find("chunk cache ");
      if (at == std::string::npos) continue;
      long long entries = 0;
      double mib = 0;
      if (std::sscanf(line.c_str() + at, "chunk cache %lld entries, %lf MiB", &entries, &mib) == 2) {
        last_ = mib * 1024;
        entries_ = entries;
      }
    }
    return last_;
  }
  long long entries() const { return entries_; }

 private:
  std::string path_;
  size_t pos_ = 0;
  double last_ = -1;
  long long entries_ = -1;
};

// Least-squares slope of y over x.
double slope(const std::vector<double>& x, const std::vector<double>& y) {
  const double n = static_cast<double>(x.size());
  if (x.size() < 2) return 0;
  double sx = 0, sy = 0, sxx = 0, sxy = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    sx += x[i];
    sy += y[i];
    sxx += x[i] * x[i];
    sxy += x[i] * y[i];
  }
  const double d = n * sxx - sx * sx;
  return d == 0 ? 0 : (n * sxy - sx * sy) / d;
}

}  // namespace

int main(int argc, char** argv) {
  options o;
  qf::bench::arg_reader args("soak", argc, argv);
  while (args.next()) {
    if (args.is("--minutes")) o.minutes = args.double_value();
    else if (args.is("--sample-s")) o.sample_s = std::max(0.1, args.double_value());
    else if (args.is("--warmup-frac")) o.warmup_frac = std::clamp(args.double_value(), 0.0, 0.9);
    else if (args.is("--max-slope")) o.max_slope = args.double_value();
    else if (args.is("--docs")) o.docs = std::max(1, args.int_value());
    else if (args.is("--interval-ms")) o.interval_ms = std::max(0, args.int_value());
    else if (args.is("--seed")) o.seed = args.unsigned_value();
    else if (args.is("--quickfill")) o.quickfill = args.value();
    else if (args.is("--model")) o.model = args.value();
    else if (args.is("--log")) o.log = args.value();
    else {
      usage();
      return args.usage_status();
    }
  }

  qf::bench::lsp_session s;
  std::string error;
  if (!s.start({o.quickfill, "--stdio", "--no-daemon", "--model", o.model, "--log-file", o.log, "--log-level", "info"}, "", &error)) {
    std::fprintf(stderr, "cannot start %s: %s\n", o.quickfill.c_str(), error.c_str());
    return 1;
  }
  json::object caps{{"general", json::object{{"positionEncodings", json::array{"utf-8"}}}}};
  if (!s.call("initialize", json::object{{"processId", nullptr}, {"rootUri", nullptr}, {"capabilities", caps}}, 30s)) {
    std::fprintf(stderr, "no answer to initialize\n");
    return 1;
  }
  s.notify("initialized", json::object{});

  session_driver drv(o, s);
  const std::string py = read_file(QUICKFILL_SOURCE_DIR "/examples/sample.py");
  const std::string cpp = read_file(QUICKFILL_SOURCE_DIR "/examples/sample.cpp");
  for (int i = 0; i < o.docs; ++i) {
    doc d;
    const bool is_py = i % 2 == 0;
    d.language = is_py ? "python" : "cpp";
    d.uri = "file:///soak/doc" + std::to_string(i) + (is_py ? ".py" : ".cpp");
    for (int k = 0; k <= i / 2; ++k) d.text += is_py ? py : cpp;  // later documents are longer
    drv.add(std::move(d));
  }
  drv.set_base_size();
  for (auto& d : drv.docs()) drv.open(d);

  const auto t0 = bclock::now();
  const auto until = t0 + std::chrono::duration_cast<bclock::duration>(std::chrono::duration<double>(o.minutes * 60));
  auto next_sample = t0;
  std::vector<double> ts, rss, cache;
  cache_figure cache_log(o.log);
  std::printf("# soak: %.1f min, sample every %.0f s, %d documents, seed %u, server pid %d\n", o.minutes, o.sample_s,
              o.docs, o.seed, s.pid());
  std::printf("# %8s %10s %8s %8s %10s\n", "t_min", "rss_kib", "edits", "requests", "cache_kib");
  bool alive = true;
  for (;;) {
    const auto now = bclock::now();
    if (now >= next_sample) {
      const double t_min = std::chrono::duration<double>(now - t0).count() / 60.0;
      const int64_t kib = qf::bench::rss_kib(s.pid());
      const double cache_kib = cache_log.kib();
      ts.push_back(t_min);
      rss.push_back(static_cast<double>(kib));
      cache.push_back(cache_kib);
      std::printf("  %8.2f %10lld %8lld %8lld %10.0f\n", t_min, static_cast<long long>(kib),
                  static_cast<long long>(drv.edits_), static_cast<long long>(drv.requests_), cache_kib);
      std::fflush(stdout);
      next_sample += std::chrono::duration_cast<bclock::duration>(std::chrono::duration<double>(o.sample_s));
    }
    if (now >= until) break;
    if (!drv.step()) {
      alive = false;
      std::printf("# the server stopped answering\n");
      dump_stacks(s.pid());
      break;
    }
    if (o.interval_ms > 0) std::this_thread::sleep_for(std::chrono::milliseconds(o.interval_ms));
  }
  // The fit: samples after the warm-up.
  std::vector<double> fx, fy, cx, cy;
  const double warm = o.minutes * o.warmup_frac;
  for (size_t i = 0; i < ts.size(); ++i)
    if (ts[i] >= warm) {
      fx.push_back(ts[i]);
      fy.push_back(rss[i]);
      if (cache[i] >= 0) {
        cx.push_back(ts[i]);
        cy.push_back(cache[i]);
      }
    }
  const double k = slope(fx, fy);
  const double lo = fy.empty() ? 0 : *std::min_element(fy.begin(), fy.end());
  const double hi = fy.empty() ? 0 : *std::max_element(fy.begin(), fy.end());
  const int code = alive ? s.finish(30s) : -1;
  std::printf(
      "# edits %lld, requests %lld (%lld answered with an error, %lld cancelled by us), reopens %lld, server exit %d\n",
      static_cast<long long>(drv.edits_), static_cast<long long>(drv.requests_), static_cast<long long>(drv.errors_),
      static_cast<long long>(drv.cancels_), static_cast<long long>(drv.reopens_), code);
  std::printf("# RSS after warm-up (t >= %.1f min, %zu samples): min %.0f KiB, max %.0f KiB, slope %.1f KiB/min\n", warm,
              fx.size(), lo, hi, k);
  if (cx.size() >= 2)
    std::printf(
        "# chunk cache (server log, its own cost estimate): %lld entries, %.0f KiB at the end; %.1f KiB/min over the "
        "same samples (bounded: %zu entries, %zu MiB)\n",
        cache_log.entries(), cy.back(), slope(cx, cy), qf::server::completion::chunk_tokenizer::k_default_max_entries,
        qf::server::completion::chunk_tokenizer::k_default_max_bytes >> 20);
  const bool pass = alive && code == 0 && fx.size() >= 2 && k <= o.max_slope;
  std::printf("%s: slope %.1f KiB/min %s %.1f KiB/min\n", pass ? "PASS" : "FAIL", k, k <= o.max_slope ? "<=" : ">",
              o.max_slope);
  return pass ? 0 : 1;
}
