// keystroke_replay: how fast does quickfill answer a typing user?
//
// For each source file (real files present on any Debian machine by default),
// the benchmark opens the file with a stretch of it removed, then types that
// stretch back character by character into the REAL quickfill binary over
// stdio, as an editor does: didChange (incremental) + a completion request per
// keystroke, cancelling the previous request if it is still pending. Keystrokes
// come at a fixed interval (an open loop, like a typist who does not wait), or,
// with --interval-ms 0, each after the previous answer (a closed loop).
//
// It prints, over answered requests: client-side latency p50/p90/p99, the
// fraction answered within the budget (the auto deadline), prompt tokens
// evaluated per keystroke, the cache hit rate, and from `quickfill/stats` the
// cancellation latency (cancel to worker free).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <boost/json.hpp>

#include "bench/bench_args.h"
#include "bench/keystroke_replay/replay_session.h"
#include "lsp/client/lsp_client.h"

namespace json = boost::json;
using qf::bench::bclock;
using qf::bench::ms;
using qf::bench::pct;
using qf::bench::pos_json;
using qf::lsp::lsp_client;
using qf::lsp::received_message;

namespace {

struct options {
  std::string quickfill = QUICKFILL_BINARY;
  std::string model;
  std::vector<std::string> files = {"/usr/lib/python3.11/textwrap.py", "/usr/lib/python3.11/shlex.py",
                                    "/usr/include/stdio.h"};
  int chars = 150;
  int interval_ms = 150;
  int threads = 2;
  int deadline_ms = 400;
  bool inline_kind = true;
  double start_frac = 0.4;
  std::string settings =
      R"({"stopRules": false, "maxTokens": 16, "typeThrough": false, "autoTriggerMidWord": true})";
  std::string log = "keystroke_replay.server.log";
  std::string device = "auto";
  bool json_out = false;
};

void usage() {
  std::puts(
      "usage: keystroke_replay --model FILE.gguf [--quickfill BIN] [--files a,b,..] [--chars N]\n"
      "         [--interval-ms N (0 = wait for each answer)] [--threads N] [--deadline-ms N]\n"
      "         [--kind inline|completion] [--start-frac F] [--settings JSON] [--log FILE] [--json]\n"
      "         [--device auto|cpu|cuda]\n"
      "  --settings: the \"completion\" settings object (docs/configuration.md); the default turns\n"
      "  stop rules and type-through off and fixes 16 generated tokens, for speed figures.");
}

struct totals {
  int keystrokes = 0, answered = 0, within = 0, within_slack = 0, cancelled = 0, errors = 0, empty = 0, incomplete = 0;
  std::vector<double> latency;          // client side, answered
  std::vector<double> evaluated;        // per answered request (server metrics)
  std::vector<double> cancel_to_free;   // from stats
  int cache_hits = 0, stats_answered = 0;
  double cold_ms = 0;
  std::vector<double> ttft;
};

bool run_file(lsp_client& c, const options& o, const std::string& path, int file_no, totals& t) {
  const std::optional<std::string> source = qf::bench::read_source(path);
  if (!source) {
    std::fprintf(stderr, "keystroke_replay: cannot read %s (skipped)\n", path.c_str());
    return false;
  }
  const std::string& full = *source;
  // Start typing at the beginning of the line at start_frac of the file.
  const size_t start = qf::bench::line_start_at(full, o.start_frac);
  const std::string typed = full.substr(start, static_cast<size_t>(o.chars));
  std::string doc = full.substr(0, start) + full.substr(start + typed.size());
  const std::string uri = "file:///bench/" + std::to_string(file_no) + "/" + path.substr(path.rfind('/') + 1);
  const std::string lang = path.ends_with(".py") ? "python" : "c";
  int64_t version = 1;
  c.notify("textDocument/didOpen",
           json::object{{"textDocument", json::object{{"uri", uri}, {"languageId", lang}, {"version", version}, {"text", doc}}}});
  size_t cursor = start;
  auto line_col = [&](size_t off) { return qf::bench::line_col(doc, off); };
  auto completion = [&](bool explicit_trigger) {
    auto [line, col] = line_col(cursor);
    json::object p{{"textDocument", json::object{{"uri", uri}}}, {"position", pos_json(line, col)}};
    if (o.inline_kind) {
      p["context"] = json::object{{"triggerKind", explicit_trigger ? 1 : 2}};
      return c.request("textDocument/inlineCompletion", p);
    }
    p["context"] = json::object{{"triggerKind", explicit_trigger ? 1 : 3}};
    return c.request("textDocument/completion", p);
  };
  // Cold start: the whole prompt must be evaluated once. Like a user who looks
  // at a freshly opened file before typing, ask (explicitly) until an answer
  // with a suggestion comes, pausing in between so background warming runs.
  {
    auto t0 = bclock::now();
    for (int attempt = 0; attempt < 120; ++attempt) {
      int64_t id = completion(true);
      const std::optional<received_message> rep = c.wait_response(id, std::chrono::seconds(300));
      if (!rep) {
        std::fprintf(stderr, "keystroke_replay: no answer to the first request on %s\n", path.c_str());
        return false;
      }
      const json::object& m = rep->body.as_object();
      const json::value* res = m.if_contains("result");
      const json::array* items = nullptr;
      if (res && res->is_array()) items = &res->as_array();
      if (res && res->is_object())
        if (const json::value* it = res->as_object().if_contains("items")) items = it->if_array();
      if (items && !items->empty()) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(1000));
    }
    t.cold_ms = std::max(t.cold_ms, ms(t0, bclock::now()));
  }
  struct pending {
    int64_t id;
    bclock::time_point sent;
    std::optional<received_message> reply;
  };
  std::vector<pending> sent;
  const auto t_start = bclock::now();
  int n = 0;
  for (char ch : typed) {
    if (o.interval_ms > 0) std::this_thread::sleep_until(t_start + std::chrono::milliseconds(o.interval_ms) * n);
    ++n;
    auto [line, col] = line_col(cursor);
    doc.insert(cursor, 1, ch);
    ++cursor;
    ++version;
    json::object change{{"range", json::object{{"start", pos_json(line, col)}, {"end", pos_json(line, col)}}},
                        {"text", std::string(1, ch)}};
    // An editor cancels the request it no longer needs.
    if (!sent.empty() && !sent.back().reply && !c.has_response(sent.back().id))
      c.notify("$/cancelRequest", json::object{{"id", sent.back().id}});
    c.notify("textDocument/didChange", json::object{{"textDocument", json::object{{"uri", uri}, {"version", version}}},
                                                    {"contentChanges", json::array{change}}});
    sent.push_back(pending{completion(false), bclock::now(), std::nullopt});
    ++t.keystrokes;
    if (o.interval_ms == 0) sent.back().reply = c.wait_response(sent.back().id, std::chrono::seconds(120));
  }
  // Every request gets exactly one reply (a result or an error).
  for (pending& p : sent) {
    if (!p.reply) p.reply = c.wait_response(p.id, std::chrono::seconds(120));
    if (!p.reply) {
      ++t.errors;
      continue;
    }
    const received_message& r = *p.reply;
    const json::object& m = r.body.as_object();
    if (const json::value* e = m.if_contains("error")) {
      const int64_t code = e->as_object().at("code").to_number<int64_t>();
      if (code == -32801 || code == -32800) ++t.cancelled;
      else ++t.errors;
      continue;
    }
    const double lat = ms(p.sent, r.at);
    ++t.answered;
    t.latency.push_back(lat);
    if (lat <= o.deadline_ms) ++t.within;
    if (lat <= o.deadline_ms + 10) ++t.within_slack;
    const json::value& res = m.at("result");
    const json::array* items = nullptr;
    if (res.is_array()) items = &res.as_array();
    else if (res.is_object()) {
      if (const json::value* it = res.as_object().if_contains("items")) items = it->if_array();
      if (const json::value* inc = res.as_object().if_contains("isIncomplete"); inc && inc->is_bool() && inc->as_bool())
        ++t.incomplete;
    }
    if (!items || items->empty()) ++t.empty;
  }
  // Server-side metrics of this file's requests.
  int64_t sid = c.request("quickfill/stats", json::object{{"recent", static_cast<int64_t>(sent.size())}});
  if (const std::optional<received_message> sr = c.wait_response(sid, std::chrono::seconds(30))) {
    const json::value& st = sr->body.as_object().at("result");
    if (const json::value* rec = st.as_object().if_contains("recent")) {
      for (const json::value& rv : rec->as_array()) {
        const json::object& ro = rv.as_object();
        const double ev = ro.at("tokensEvaluated").to_number<double>();
        if (ro.at("outcome").as_string() == "answered") {
          t.evaluated.push_back(ev);
          ++t.stats_answered;
          if (ro.at("cacheHit").as_bool()) ++t.cache_hits;
          if (ro.at("tokensGenerated").to_number<double>() > 0) t.ttft.push_back(ro.at("ttftMs").to_number<double>());
        }
      }
    }
    if (const json::value* ctf = st.as_object().if_contains("cancelToFreeMs")) {
      const json::object& co = ctf->as_object();
      // Keep the aggregate figures of the latest query (they cover the whole run).
      t.cancel_to_free = {co.at("p50").to_number<double>(), co.at("p90").to_number<double>(),
                          co.at("p99").to_number<double>(), co.at("count").to_number<double>()};
    }
  }
  c.notify("textDocument/didClose", json::object{{"textDocument", json::object{{"uri", uri}}}});
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  options o;
  qf::bench::arg_reader args("keystroke_replay", argc, argv);
  while (args.next()) {
    if (args.is("--model")) o.model = args.value();
    else if (args.is("--quickfill")) o.quickfill = args.value();
    else if (args.is("--files")) o.files = args.list_value();
    else if (args.is("--chars")) o.chars = args.int_value();
    else if (args.is("--interval-ms")) o.interval_ms = args.int_value();
    else if (args.is("--threads")) o.threads = args.int_value();
    else if (args.is("--deadline-ms")) o.deadline_ms = args.int_value();
    else if (args.is("--kind")) o.inline_kind = args.value() != "completion";
    else if (args.is("--start-frac")) o.start_frac = args.double_value();
    else if (args.is("--settings")) o.settings = args.value();
    else if (args.is("--log")) o.log = args.value();
    else if (args.is("--json")) o.json_out = true;
    else if (args.is("--device")) o.device = args.value();
    else {
      usage();
      return args.usage_status();
    }
  }
  if (o.model.empty()) {
    usage();
    return 2;
  }
  boost::system::error_code ec;
  json::value completion_settings = json::parse(o.settings, ec);
  if (ec || !completion_settings.is_object()) {
    std::fprintf(stderr, "keystroke_replay: --settings is not a JSON object\n");
    return 2;
  }
  completion_settings.as_object()["autoDeadlineMs"] = o.deadline_ms;
  json::object settings{{"model", o.model}, {"device", o.device}, {"completion", completion_settings}};

  lsp_client c;
  if (!qf::bench::start_server(c, o.quickfill, o.threads, o.log, settings, "keystroke_replay")) return 1;
  totals t;
  int file_no = 0;
  for (const std::string& f : o.files) run_file(c, o, f, file_no++, t);
  qf::bench::stop_server(c);

  const double k = std::max(1, t.keystrokes);
  // Cancelled requests carry no metrics in quickfill/stats, so the figure is per answered request.
  double ev_sum = 0;
  for (double v : t.evaluated) ev_sum += v;
  const double ev_mean = t.evaluated.empty() ? 0.0 : ev_sum / static_cast<double>(t.evaluated.size());
  const double ctf50 = t.cancel_to_free.size() == 4 ? t.cancel_to_free[0] : 0;
  const double ctf90 = t.cancel_to_free.size() == 4 ? t.cancel_to_free[1] : 0;
  const double ctf99 = t.cancel_to_free.size() == 4 ? t.cancel_to_free[2] : 0;
  const double ctfn = t.cancel_to_free.size() == 4 ? t.cancel_to_free[3] : 0;
  if (o.json_out) {
    json::object out{{"keystrokes", t.keystrokes},
                     {"answered", t.answered},
                     {"cancelled", t.cancelled},
                     {"errors", t.errors},
                     {"emptyAnswers", t.empty},
                     {"latencyMs", json::object{{"p50", pct(t.latency, 50)}, {"p90", pct(t.latency, 90)}, {"p99", pct(t.latency, 99)}}},
                     {"withinBudgetOfAnswered", t.answered ? double(t.within) / t.answered : 0.0},
                     {"withinBudgetOfKeystrokes", double(t.within) / k},
                     {"withinBudgetPlus10msOfAnswered", t.answered ? double(t.within_slack) / t.answered : 0.0},
                     {"tokensEvaluatedPerAnswered", ev_mean},
                     {"tokensEvaluatedAnsweredP50", pct(t.evaluated, 50)},
                     {"cacheHitRate", t.stats_answered ? double(t.cache_hits) / t.stats_answered : 0.0},
                     {"cancelToFreeMs", json::object{{"p50", ctf50}, {"p90", ctf90}, {"p99", ctf99}, {"count", ctfn}}},
                     {"coldFirstRequestMs", t.cold_ms}};
    std::puts(json::serialize(out).c_str());
    return 0;
  }
  std::printf("keystroke_replay: %d keystrokes over %zu file(s), interval %d ms, budget %d ms, %s requests\n",
              t.keystrokes, o.files.size(), o.interval_ms, o.deadline_ms, o.inline_kind ? "inline" : "completion");
  std::printf("  answered            %d (%.0f%%), cancelled/stale %d, errors %d, empty answers %d, incomplete %d\n",
              t.answered, 100.0 * t.answered / k, t.cancelled, t.errors, t.empty, t.incomplete);
  std::printf("  latency answered    p50 %.1f ms  p90 %.1f ms  p99 %.1f ms\n", pct(t.latency, 50), pct(t.latency, 90),
              pct(t.latency, 99));
  std::printf("  within budget       %.1f%% of answered, %.1f%% of keystrokes\n",
              t.answered ? 100.0 * t.within / t.answered : 0.0, 100.0 * t.within / k);
  std::printf("  within budget+10ms  %.1f%% of answered\n", t.answered ? 100.0 * t.within_slack / t.answered : 0.0);
  std::printf("  ttft (server)       p50 %.1f ms  p90 %.1f ms\n", pct(t.ttft, 50), pct(t.ttft, 90));
  std::printf("  tokens evaluated    mean %.1f per answered request, p50 %.0f p90 %.0f\n", ev_mean,
              pct(t.evaluated, 50), pct(t.evaluated, 90));
  std::printf("  cache hit rate      %.1f%% of answered\n",
              t.stats_answered ? 100.0 * t.cache_hits / t.stats_answered : 0.0);
  std::printf("  cancel -> free      p50 %.2f ms  p90 %.2f ms  p99 %.2f ms  (%.0f cancellations of running jobs)\n",
              ctf50, ctf90, ctf99, ctfn);
  std::printf("  cold start          %.0f ms until the first suggestion (whole prompt; explicit requests 1 s apart)\n", t.cold_ms);
  return 0;
}
