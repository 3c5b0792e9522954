// Figures of the per-user daemon (docs/daemon.md): the resident memory of N
// editors' servers -- N in-process `quickfill --stdio --no-daemon` against
// one daemon plus N bridges -- as PSS from /proc/PID/smaps_rollup (shared
// pages split between the processes that map them, so the sums add up), and
// the keystroke latency (didChange + completion, client side) of 1, 2, 4, ...
// up to N clients typing at once through one daemon, each in its own file
// (with --files, client i opens file i mod count, then types at its end).
// With --same-uri the clients are windows on one file (one URI; give one
// file or none); the first completion of each window says how many of its
// prompt tokens were evaluated, the others' copied from the windows before.
//
//   daemon_bench [--model PATH] [--clients N] [--keys K] [--files A,B,...] [--same-uri] [--settings JSON]
//                [--explicit] [--quickfill BIN]
//
// --settings merges a JSON object of quickfill settings into every client's
// initializationOptions (e.g. '{"completion": {"cacheMiB": 72}}'). --explicit
// asks invoked completions (trigger kind 1: the explicit deadline, one
// candidate of at most 16 tokens) instead of automatic ones, so that the
// figure is the time of a whole answer, not the automatic deadline.
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <boost/json.hpp>

#include "bench/bench_stats.h"
#include "bench/bench_args.h"
#include "bench/bench_settings.h"
#include "lsp/client/lsp_client.h"

namespace json = boost::json;
using namespace std::chrono_literals;
using clk = std::chrono::steady_clock;
using qf::bench::quantile;

namespace {

struct options {
  std::string quickfill = QUICKFILL_BINARY;
  std::string model;
  int clients = 4;
  int keys = 40;
  std::vector<std::string> files;  // each client's document (empty: a short built-in one)
  json::object settings{{"completion", json::object{{"autoDeadlineMs", 400}}}};
  bool explicit_trigger = false;
  bool same_uri = false;
};

std::string read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
}

long pss_kib(pid_t pid) {
  std::ifstream f("/proc/" + std::to_string(pid) + "/smaps_rollup");
  std::string key;
  long v = 0;
  while (f >> key) {
    if (key == "Pss:") {
      f >> v;
      return v;
    }
    f.ignore(1 << 20, '\n');
  }
  return 0;
}

pid_t read_pid(const std::string& file) {
  std::ifstream f(file);
  long p = 0;
  return f >> p ? static_cast<pid_t>(p) : -1;
}

const char* k_text =
    "import os\n\n\ndef read_lines(path):\n    with open(path) as f:\n        return f.read().splitlines()\n\n\n"
    "def main():\n    ";
const char* k_typed = "lines = read_lines(os.path.join(os.getcwd(), 'data.txt'))\n    for line in lines:\n        print(line)";

class session {
 public:
  bool start(const options& o, const std::vector<std::string>& extra, const std::string& log,
             const std::string& text = k_text) {
    std::vector<std::string> argv{o.quickfill, "--stdio", "--model", o.model, "--log-file", log};
    argv.insert(argv.end(), extra.begin(), extra.end());
    qf::lsp::client_options co;
    co.answer_server_requests = true;
    std::string error;
    if (!c_.start(argv, co, &error)) return std::fprintf(stderr, "%s\n", error.c_str()), false;
    const auto id = c_.request("initialize", json::object{{"processId", nullptr},
                                                        {"capabilities", json::object{}},
                                                        {"initializationOptions", o.settings}});
    if (!c_.wait_response(id, 60s)) return false;
    c_.notify("initialized", json::object{});
    for (int i = 0; i < 600; ++i) {
      auto r = c_.wait_response(c_.request("quickfill/status", nullptr), 10s);
      if (r && r->body.at("result").at("modelLoaded").as_bool()) break;
      std::this_thread::sleep_for(100ms);
    }
    c_.notify("textDocument/didOpen", json::object{{"textDocument", json::object{{"uri", uri_},
                                                                                 {"languageId", "python"},
                                                                                 {"version", 1},
                                                                                 {"text", text}}}});
    text_ = text;
    return true;
  }
  // One keystroke: the character, then an automatic completion at the cursor.
  double keystroke(char ch, bool explicit_trigger) {
    std::int64_t line = 0, col = 0;
    for (char c : text_) c == '\n' ? (++line, col = 0) : ++col;
    json::object pos{{"line", line}, {"character", col}};
    const auto t0 = clk::now();
    c_.notify("textDocument/didChange",
              json::object{{"textDocument", json::object{{"uri", uri_}, {"version", ++version_}}},
                           {"contentChanges", json::array{json::object{{"range", json::object{{"start", pos}, {"end", pos}}},
                                                                       {"text", std::string(1, ch)}}}}});
    text_ += ch;
    ch == '\n' ? (++line, col = 0) : ++col;
    const auto id = c_.request("textDocument/completion",
                               json::object{{"textDocument", json::object{{"uri", uri_}}},
                                            {"position", json::object{{"line", line}, {"character", col}}},
                                            {"context", json::object{{"triggerKind", explicit_trigger ? 1 : 2}}}});
    c_.wait_response(id, 30s);
    return std::chrono::duration<double, std::milli>(clk::now() - t0).count();
  }
  // Prompt tokens the server evaluated for each of this client's last n
  // requests (quickfill/stats): a keystroke continuing its cache evaluates a
  // few; one whose cache another window evicted evaluates its whole prompt.
  std::vector<double> evaluated(int n) {
    std::vector<double> out;
    auto r = c_.wait_response(c_.request("quickfill/stats", json::object{{"recent", n}}), 10s);
    if (!r) return out;
    const json::value* rec = r->body.as_object().if_contains("result");
    if (!rec || !rec->is_object() || !rec->as_object().contains("recent")) return out;
    for (const auto& e : rec->as_object().at("recent").as_array())
      if (e.as_object().at("outcome").as_string() == "answered")
        out.push_back(e.as_object().at("tokensEvaluated").to_number<double>());
    return out;
  }
  void stop() {
    c_.wait_response(c_.request("shutdown", nullptr), 10s);
    c_.notify("exit", nullptr);
    bool timed_out = false;
    c_.wait_exit(10s, &timed_out);
  }
  pid_t pid() const { return c_.pid(); }
  void set_uri(std::string u) { uri_ = std::move(u); }

 private:
  qf::lsp::lsp_client c_;
  std::string uri_ = "file:///bench.py", text_;
  std::int64_t version_ = 1;
};

}  // namespace

int main(int argc, char** argv) {
  std::signal(SIGPIPE, SIG_IGN);
  options o;
  qf::bench::arg_reader args("daemon_bench", argc, argv);
  while (args.next()) {
    if (args.is("--model")) o.model = args.value();
    else if (args.is("--clients")) o.clients = args.int_value();
    else if (args.is("--keys")) o.keys = args.int_value();
    else if (args.is("--quickfill")) o.quickfill = args.value();
    else if (args.is("--same-uri")) o.same_uri = true;
    else if (args.is("--explicit")) {
      o.explicit_trigger = true;
      o.settings["completion"].as_object()["candidatesExplicit"] = 1;
      o.settings["completion"].as_object()["maxTokensExplicit"] = 16;
    } else if (args.is("--settings")) {
      if (!qf::bench::merge_settings(o.settings, args.value()))
        return std::fprintf(stderr, "--settings: not a JSON object\n"), 2;
    } else if (args.is("--files")) {
      for (std::string& f : args.list_value()) o.files.push_back(std::move(f));
    } else {
      std::fprintf(stderr,
                   "usage: daemon_bench [--model PATH] [--clients N] [--keys K] [--files A,B,...] [--same-uri] "
                   "[--settings JSON] [--explicit] [--quickfill BIN]\n");
      return args.usage_status();
    }
  }
  if (o.model.empty()) o.model = std::string(QUICKFILL_SOURCE_DIR_BENCH) + "/models/quickfill-tiny-code.gguf";
  ::unsetenv("QUICKFILL_NO_DAEMON");
  char tmpl[] = "/tmp/qf-daemon-bench-XXXXXX";
  if (!::mkdtemp(tmpl)) return 1;
  const std::string dir = tmpl;
  std::printf("model: %s\nclients: %d\n", o.model.c_str(), o.clients);

  // 1. Memory: N in-process servers.
  {
    std::vector<std::unique_ptr<session>> s;
    for (int i = 0; i < o.clients; ++i) {
      s.push_back(std::make_unique<session>());
      if (!s.back()->start(o, {"--no-daemon"}, dir + "/inproc.log")) return 1;
      s.back()->keystroke(' ', false);
    }
    long total = 0;
    for (auto& x : s) total += pss_kib(x->pid());
    std::printf("in-process: %d servers, PSS total %.1f MiB (%.1f MiB each)\n", o.clients, total / 1024.0,
                total / 1024.0 / o.clients);
    for (auto& x : s) x->stop();
  }
  // 2. Memory: one daemon + N bridges.
  {
    std::vector<std::unique_ptr<session>> s;
    for (int i = 0; i < o.clients; ++i) {
      s.push_back(std::make_unique<session>());
      s.back()->set_uri(o.same_uri ? "file:///bench.py" : "file:///bench" + std::to_string(i) + ".py");
      std::string text = k_text;
      if (!o.files.empty()) {
        text = read_file(o.files[i % o.files.size()]);
        if (text.empty()) return std::fprintf(stderr, "cannot read %s\n", o.files[i % o.files.size()].c_str()), 1;
        text += "\n\ndef main():\n    ";
      }
      if (!s.back()->start(o, {"--socket-dir", dir, "--idle-timeout", "5"}, dir + "/bridge.log", text)) return 1;
      s.back()->keystroke(' ', false);
    }
    // The first completion of each window, one window after another.
    std::string first;
    for (auto& x : s) {
      const std::vector<double> e = x->evaluated(1);
      first += (first.empty() ? "" : ", ") + (e.empty() ? std::string("-") : std::to_string(static_cast<long>(e[0])));
    }
    std::printf("first completion of each window (%s): prompt tokens evaluated %s\n",
                o.same_uri ? "one file" : "own files", first.c_str());
    long bridges = 0;
    for (auto& x : s) bridges += pss_kib(x->pid());
    const long daemon = pss_kib(read_pid(dir + "/daemon.pid"));
    std::printf("daemon: 1 daemon %.1f MiB + %d bridges %.1f MiB (%.1f MiB each) = %.1f MiB\n", daemon / 1024.0,
                o.clients, bridges / 1024.0, bridges / 1024.0 / o.clients, (daemon + bridges) / 1024.0);

    // 3. Latency through the daemon: 1, 2, 4, ... clients typing at once,
    // each going on where it stopped in its own document.
    std::vector<int> typed(s.size(), 0);
    for (int n = 1; n <= o.clients; n = n * 2 > o.clients && n < o.clients ? o.clients : n * 2) {
      std::vector<std::vector<double>> lat(n);
      std::vector<std::thread> threads;
      for (int c = 0; c < n; ++c)
        threads.emplace_back([&, c] {
          for (int k = 0; k < o.keys; ++k) lat[c].push_back(s[c]->keystroke(k_typed[typed[c]++ % 100], o.explicit_trigger));
        });
      for (auto& t : threads) t.join();
      std::vector<double> all, evaluated;
      for (auto& l : lat) all.insert(all.end(), l.begin(), l.end());
      for (int c = 0; c < n; ++c) {
        const std::vector<double> e = s[c]->evaluated(o.keys);
        evaluated.insert(evaluated.end(), e.begin(), e.end());
      }
      std::printf("keystroke latency, %d client%s typing: p50 %.1f ms, p90 %.1f ms (%zu keystrokes); "
                  "prompt tokens evaluated p50 %.0f, p90 %.0f (%zu answered)\n",
                  n, n == 1 ? "" : "s", quantile(all, 0.5), quantile(all, 0.9), all.size(), quantile(evaluated, 0.5),
                  quantile(evaluated, 0.9), evaluated.size());
    }
    for (auto& x : s) x->stop();
  }
  const pid_t d = read_pid(dir + "/daemon.pid");
  if (d > 0) ::kill(d, SIGTERM);
  return 0;
}
