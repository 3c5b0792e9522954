// jump_replay: the first suggestion after the cursor jumps elsewhere in a file
// the server has seen, against a keystroke's.
//
// The REAL quickfill binary gets one source file with a few characters taken
// out at each of --jumps + 1 places (far apart: consecutive places are about
// 0.38 or 0.62 of the file away from each other). The user types them back
// place after place: at each place --keys keystrokes, each a didChange and an
// automatic inlineCompletion request that is waited for (a closed loop, so
// every request is answered, with a deadline wide enough for a whole prompt);
// between places a pause of --pause-ms (the user looks at the new place; idle
// time in which the server's background work runs). With --back, every jump to
// a new place is followed by a jump back to the place before it (A B A C B D C
// ...), as when the user looks something up and returns.
//
// It prints the latency p50/p90 of keystrokes (requests after the first at a
// place), of the first request after a jump to a new place and after a jump
// back, their ratios to the keystroke p50, and the prompt tokens evaluated
// (from quickfill/stats) by each kind of request.
#include <cmath>

#include "bench/bench_args.h"
#include "bench/keystroke_replay/replay_session.h"

namespace json = boost::json;
using namespace qf::bench;
using qf::lsp::lsp_client;
using qf::lsp::received_message;

namespace {

struct options {
  std::string quickfill = QUICKFILL_BINARY;
  std::string model;
  std::string file = "/usr/lib/python3.11/argparse.py";
  int jumps = 12;
  int keys = 6;
  int pause_ms = 500;
  int threads = 2;
  int deadline_ms = 20000;
  bool back = false;
  std::string settings = R"({"stopRules": false, "maxTokens": 16, "typeThrough": false, "autoTriggerMidWord": true,
                             "minConfidence": -100})";
  std::string log = "jump_replay.server.log";
  std::string device = "auto";
  bool json_out = false;
};

void usage() {
  std::puts(
      "usage: jump_replay --model FILE.gguf [--quickfill BIN] [--file F] [--jumps K] [--keys N]\n"
      "         [--pause-ms N] [--back] [--threads N] [--deadline-ms N] [--settings JSON] [--log FILE]\n"
      "         [--device auto|cpu|cuda] [--json]\n"
      "  --settings: the \"completion\" settings object (docs/configuration.md); the default turns\n"
      "  stop rules, type-through and the confidence gate off and fixes 16 generated tokens.");
}

enum class kind { keystroke, jump, back };

struct request_record {
  kind k;
  int64_t version;
  double latency_ms = 0;
  bool answered = false;
};

struct place {
  size_t at = 0;      // where the text goes back, in the current document
  std::string text;   // what is typed back there
  size_t typed = 0;   // how much of it is typed
};

// Fraction of the file of the i-th place: golden-ratio steps, so consecutive
// places are far apart and all of them spread over the file.
double place_fraction(int i) {
  const double golden = 0.6180339887498949;
  const double f = std::fmod(0.5 + golden * i, 1.0);
  return 0.03 + 0.94 * f;
}

}  // namespace

int main(int argc, char** argv) {
  options o;
  arg_reader args("jump_replay", argc, argv);
  while (args.next()) {
    if (args.is("--model")) o.model = args.value();
    else if (args.is("--quickfill")) o.quickfill = args.value();
    else if (args.is("--file")) o.file = args.value();
    else if (args.is("--jumps")) o.jumps = args.int_value();
    else if (args.is("--keys")) o.keys = args.int_value();
    else if (args.is("--pause-ms")) o.pause_ms = args.int_value();
    else if (args.is("--back")) o.back = true;
    else if (args.is("--threads")) o.threads = args.int_value();
    else if (args.is("--deadline-ms")) o.deadline_ms = args.int_value();
    else if (args.is("--settings")) o.settings = args.value();
    else if (args.is("--log")) o.log = args.value();
    else if (args.is("--device")) o.device = args.value();
    else if (args.is("--json")) o.json_out = true;
    else {
      usage();
      return args.usage_status();
    }
  }
  if (o.model.empty() || o.jumps < 1 || o.keys < 2) {
    usage();
    return 2;
  }
  const std::optional<std::string> source = read_source(o.file);
  if (!source) {
    std::fprintf(stderr, "jump_replay: cannot read %s\n", o.file.c_str());
    return 1;
  }
  boost::system::error_code ec;
  json::value cs = json::parse(o.settings, ec);
  if (ec || !cs.is_object()) {
    std::fprintf(stderr, "jump_replay: --settings is not a JSON object\n");
    return 2;
  }
  cs.as_object()["autoDeadlineMs"] = o.deadline_ms;

  // The places: --keys characters from the start of the first non-blank text
  // of a line at each fraction, taken out of the document.
  std::vector<place> places;
  std::string doc;
  {
    std::vector<size_t> starts;
    for (int i = 0; i <= o.jumps; ++i) {
      size_t at = line_start_at(*source, place_fraction(i));
      // Skip blank lines and indentation: type where code starts.
      while (at < source->size()) {
        const size_t eol = source->find('\n', at);
        const size_t end = eol == std::string::npos ? source->size() : eol;
        size_t first = at;
        while (first < end && ((*source)[first] == ' ' || (*source)[first] == '\t')) ++first;
        if (end - first >= static_cast<size_t>(o.keys)) {
          at = first;
          break;
        }
        at = end + 1;
      }
      if (at + static_cast<size_t>(o.keys) > source->size()) {
        std::fprintf(stderr, "jump_replay: %s is too short for %d places\n", o.file.c_str(), o.jumps + 1);
        return 1;
      }
      if (std::find(starts.begin(), starts.end(), at) != starts.end()) {
        std::fprintf(stderr, "jump_replay: two places fall on one line of %s; fewer --jumps\n", o.file.c_str());
        return 1;
      }
      starts.push_back(at);
    }
    std::vector<size_t> order(starts.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return starts[a] < starts[b]; });
    places.resize(starts.size());
    size_t from = 0;  // source bytes before it are in doc
    for (size_t i : order) {
      places[i].at = doc.size() + (starts[i] - from);  // the document in front of it lacks the earlier places' text
      places[i].text = source->substr(starts[i], static_cast<size_t>(o.keys));
      doc.append(*source, from, starts[i] - from);
      from = starts[i] + places[i].text.size();
    }
    doc.append(*source, from, std::string::npos);
  }

  json::object settings{{"model", o.model}, {"device", o.device}, {"completion", cs}};
  lsp_client c;
  if (!start_server(c, o.quickfill, o.threads, o.log, settings, "jump_replay")) return 1;
  const std::string uri = "file:///bench/jump/" + o.file.substr(o.file.rfind('/') + 1);
  const std::string lang = o.file.ends_with(".py") ? "python" : "c";
  int64_t version = 1;
  c.notify("textDocument/didOpen",
           json::object{{"textDocument", json::object{{"uri", uri}, {"languageId", lang}, {"version", version}, {"text", doc}}}});

  auto ask = [&](size_t cursor, bool explicit_trigger) {
    auto [line, col] = line_col(doc, cursor);
    return c.request("textDocument/inlineCompletion",
                     json::object{{"textDocument", json::object{{"uri", uri}}},
                                  {"position", pos_json(line, col)},
                                  {"context", json::object{{"triggerKind", explicit_trigger ? 1 : 2}}}});
  };
  // Cold start at the first place, as keystroke_replay does: explicit requests
  // until a suggestion comes, so the file's first prompt is not in the figures.
  double cold_ms = 0;
  {
    const auto t0 = bclock::now();
    for (int attempt = 0; attempt < 120; ++attempt) {
      const std::optional<received_message> rep = c.wait_response(ask(places[0].at, true), std::chrono::seconds(300));
      if (!rep) {
        std::fprintf(stderr, "jump_replay: no answer to the first request\n");
        return 1;
      }
      const json::array* items = result_items(rep->body.as_object());
      if (items && !items->empty()) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(1000));
    }
    cold_ms = ms(t0, bclock::now());
  }

  // The visits: each place once, or with --back each new place and then the one before it.
  std::vector<std::pair<size_t, kind>> visits;
  visits.push_back({0, kind::jump});
  for (size_t i = 1; i < places.size(); ++i) {
    visits.push_back({i, kind::jump});
    if (o.back) visits.push_back({i - 1, kind::back});
  }
  // Keys per visit: the place's text shared out over its visits.
  std::vector<int> visits_of(places.size(), 0);
  for (const auto& v : visits) ++visits_of[v.first];

  std::vector<request_record> records;
  int errors = 0;
  bool first_visit = true;
  for (const auto& [pi, k] : visits) {
    place& p = places[pi];
    size_t n = p.text.size() / static_cast<size_t>(visits_of[pi]);
    if (--visits_of[pi] == 0) n = p.text.size() - p.typed;
    if (!first_visit) std::this_thread::sleep_for(std::chrono::milliseconds(o.pause_ms));
    for (size_t j = 0; j < n; ++j) {
      const size_t cursor = p.at + p.typed;
      const char ch = p.text[p.typed];
      auto [line, col] = line_col(doc, cursor);
      doc.insert(cursor, 1, ch);
      ++p.typed;
      for (place& q : places)
        if (&q != &p && q.at >= cursor) ++q.at;
      json::object change{{"range", json::object{{"start", pos_json(line, col)}, {"end", pos_json(line, col)}}},
                          {"text", std::string(1, ch)}};
      c.notify("textDocument/didChange", json::object{{"textDocument", json::object{{"uri", uri}, {"version", ++version}}},
                                                      {"contentChanges", json::array{change}}});
      const auto sent = bclock::now();
      const std::optional<received_message> rep = c.wait_response(ask(cursor + 1, false), std::chrono::seconds(120));
      request_record r{j == 0 && !first_visit ? k : kind::keystroke, version};
      if (!rep || rep->body.as_object().if_contains("error")) {
        ++errors;
      } else {
        r.answered = true;
        r.latency_ms = ms(sent, rep->at);
      }
      records.push_back(r);
    }
    first_visit = false;
  }

  // Prompt tokens evaluated, per request version, from the server's own records.
  std::vector<double> eval_key, eval_jump, eval_back;
  {
    const int64_t sid = c.request("quickfill/stats", json::object{{"recent", static_cast<int64_t>(records.size()) + 200}});
    if (const std::optional<received_message> sr = c.wait_response(sid, std::chrono::seconds(30))) {
      const json::value& st = sr->body.as_object().at("result");
      if (const json::value* rec = st.as_object().if_contains("recent")) {
        for (const json::value& rv : rec->as_array()) {
          const json::object& ro = rv.as_object();
          if (ro.at("outcome").as_string() != "answered" || ro.at("uri").as_string() != uri) continue;
          const int64_t v = ro.at("version").to_number<int64_t>();
          const double ev = ro.at("tokensEvaluated").to_number<double>();
          for (const request_record& r : records) {
            if (r.version != v) continue;
            (r.k == kind::keystroke ? eval_key : r.k == kind::jump ? eval_jump : eval_back).push_back(ev);
          }
        }
      }
    }
  }
  stop_server(c);

  std::vector<double> lat_key, lat_jump, lat_back;
  for (const request_record& r : records)
    if (r.answered) (r.k == kind::keystroke ? lat_key : r.k == kind::jump ? lat_jump : lat_back).push_back(r.latency_ms);
  const double key50 = pct(lat_key, 50);
  auto ratio = [&](const std::vector<double>& v) { return key50 > 0 && !v.empty() ? pct(v, 50) / key50 : 0.0; };
  auto mean = [](const std::vector<double>& v) {
    double s = 0;
    for (double x : v) s += x;
    return v.empty() ? 0.0 : s / static_cast<double>(v.size());
  };
  if (o.json_out) {
    auto figures = [&](const std::vector<double>& lat, const std::vector<double>& ev) {
      return json::object{{"count", lat.size()},
                          {"latencyMs", json::object{{"p50", pct(lat, 50)}, {"p90", pct(lat, 90)}}},
                          {"ratioToKeystrokeP50", key50 > 0 && !lat.empty() ? pct(lat, 50) / key50 : 0.0},
                          {"tokensEvaluated", json::object{{"mean", mean(ev)}, {"p50", pct(ev, 50)}, {"p90", pct(ev, 90)}}}};
    };
    json::object out{{"file", o.file},
                     {"jumps", o.jumps},
                     {"errors", errors},
                     {"coldFirstRequestMs", cold_ms},
                     {"keystroke", figures(lat_key, eval_key)},
                     {"jump", figures(lat_jump, eval_jump)}};
    if (o.back) out["jumpBack"] = figures(lat_back, eval_back);
    std::puts(json::serialize(out).c_str());
    return 0;
  }
  std::printf("jump_replay: %s, %d jumps%s, %d keys per place, pause %d ms, closed loop\n", o.file.c_str(), o.jumps,
              o.back ? " (each followed by a jump back)" : "", o.keys, o.pause_ms);
  std::printf("  keystroke           p50 %.1f ms  p90 %.1f ms  (%zu); tokens evaluated mean %.1f, p50 %.0f\n", key50,
              pct(lat_key, 90), lat_key.size(), mean(eval_key), pct(eval_key, 50));
  std::printf("  first after jump    p50 %.1f ms  p90 %.1f ms  (%zu) = %.2fx a keystroke; tokens evaluated mean %.0f, p50 %.0f\n",
              pct(lat_jump, 50), pct(lat_jump, 90), lat_jump.size(), ratio(lat_jump), mean(eval_jump),
              pct(eval_jump, 50));
  if (o.back)
    std::printf("  first after back    p50 %.1f ms  p90 %.1f ms  (%zu) = %.2fx a keystroke; tokens evaluated mean %.0f, p50 %.0f\n",
                pct(lat_back, 50), pct(lat_back, 90), lat_back.size(), ratio(lat_back), mean(eval_back),
                pct(eval_back, 50));
  std::printf("  errors %d; cold start %.0f ms\n", errors, cold_ms);
  return errors == 0 ? 0 : 1;
}
