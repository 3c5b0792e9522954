// burst_replay: time from the last keystroke of a burst to a suggestion, for
// a user who types what the model predicts, with in-flight reuse off and on.
//
// A burst is a word being typed at a human rhythm (--min-gap-ms..--max-gap-ms
// between keys, a pause of --pause-ms at its end): its first character comes
// from a real source file (the model could not know it), the rest is what the
// model predicted right after that character (at most --word-chars, up to a
// line break or tab), so the user types along with a running generation. The
// script of bursts is made once by an oracle: a fresh server that is asked,
// after each first character, for its suggestion and waited for. Then, for
// each setting of completion.inflightReuse, a fresh server replays the script
// (each keystroke: $/cancelRequest of a pending request, didChange, an
// automatic inlineCompletion request, as an editor does) and the figure is
// the time from the burst's last keystroke to the reply of its request, over
// replies that carry a suggestion. Runs alternate off/on for --rounds rounds.
#include <cstdlib>
#include <random>

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
  std::string file = "/usr/lib/python3.11/textwrap.py";
  int bursts = 40;
  int min_gap_ms = 60, max_gap_ms = 250, pause_ms = 700;
  int word_chars = 6;
  int deadline_ms = 300;
  int threads = 2;
  int rounds = 1;
  unsigned seed = 1;
  std::string settings = R"({"maxTokens": 16, "autoTriggerMidWord": true, "minConfidence": -100})";
};

struct burst {
  size_t at = 0;       // byte offset where it is typed
  std::string text;    // first character + the predicted part
  size_t predicted = 0;  // bytes of text that came from the model
};

struct session {
  lsp_client c;
  std::string uri = "file:///bench/burst/main.py";
  std::string doc;
  int64_t version = 1;
  bool start(const options& o, bool reuse, const std::string& log, const std::string& text) {
    json::value cs = json::parse(o.settings);
    cs.as_object()["autoDeadlineMs"] = o.deadline_ms;
    cs.as_object()["typeThrough"] = true;
    cs.as_object()["inflightReuse"] = reuse;
    json::object settings{{"model", o.model}, {"device", "cpu"}, {"completion", cs}};
    if (!start_server(c, o.quickfill, o.threads, log, settings, "burst_replay")) return false;
    doc = text;
    c.notify("textDocument/didOpen", json::object{{"textDocument", json::object{{"uri", uri},
                                                                                {"languageId", "python"},
                                                                                {"version", version},
                                                                                {"text", doc}}}});
    return true;
  }
  void type(size_t at, char ch) {
    auto [line, col] = line_col(doc, at);
    doc.insert(at, 1, ch);
    json::object change{{"range", json::object{{"start", pos_json(line, col)}, {"end", pos_json(line, col)}}},
                        {"text", std::string(1, ch)}};
    c.notify("textDocument/didChange", json::object{{"textDocument", json::object{{"uri", uri}, {"version", ++version}}},
                                                    {"contentChanges", json::array{change}}});
  }
  int64_t ask(size_t at, bool explicit_trigger) {
    auto [line, col] = line_col(doc, at);
    return c.request("textDocument/inlineCompletion",
                     json::object{{"textDocument", json::object{{"uri", uri}}},
                                  {"position", pos_json(line, col)},
                                  {"context", json::object{{"triggerKind", explicit_trigger ? 1 : 2}}}});
  }
  // The suggestion of a reply: the first item's text past what the cursor's
  // word already holds ("" for none or an error).
  static std::string suggestion(const received_message& r, int64_t cursor_col) {
    const json::array* items = result_items(r.body.as_object());
    if (!items || items->empty()) return "";
    const json::object& it = items->at(0).as_object();
    std::string text(it.at("insertText").as_string());
    int64_t from = cursor_col;
    if (const json::value* range = it.if_contains("range"))
      from = cursor_col - range->at("start").at("character").to_number<int64_t>();
    return from > 0 && static_cast<size_t>(from) <= text.size() ? text.substr(static_cast<size_t>(from)) : text;
  }
};

// Cold start: ask explicitly until a suggestion comes (the whole prompt is
// evaluated once), like a user who reads a freshly opened file.
bool warm(session& s, size_t at) {
  for (int attempt = 0; attempt < 120; ++attempt) {
    const std::optional<received_message> rep = s.c.wait_response(s.ask(at, true), std::chrono::seconds(300));
    if (!rep) return false;
    const json::array* items = result_items(rep->body.as_object());
    if (items && !items->empty()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(1000));
  }
  return false;
}

// The oracle: after each burst's first character, what does the model say?
std::vector<burst> make_script(const options& o, const std::string& doc0, size_t start, const std::string& real) {
  session s;
  std::vector<burst> script;
  if (!s.start(o, false, "burst_replay.oracle.log", doc0) || !warm(s, start)) return script;
  size_t at = start, ri = 0;
  while (static_cast<int>(script.size()) < o.bursts && ri < real.size()) {
    const char first = real[ri++];
    if (first == '\n' || first == ' ') continue;
    burst b;
    b.at = at;
    s.type(at, first);
    b.text = std::string(1, first);
    const std::optional<received_message> rep = s.c.wait_response(s.ask(at + 1, false), std::chrono::seconds(60));
    if (rep) {
      const std::string sug = session::suggestion(*rep, line_col(s.doc, at + 1).second);
      for (char ch : sug) {
        if (ch == '\n' || ch == '\t' || b.predicted >= static_cast<size_t>(o.word_chars)) break;
        b.text += ch;
        ++b.predicted;
      }
    }
    for (size_t i = 1; i < b.text.size(); ++i) s.type(at + i, b.text[i]);
    at += b.text.size();
    script.push_back(b);
    // The word ends: a space, as a user would type it (the next burst starts after it).
    s.type(at++, ' ');
  }
  stop_server(s.c);
  return script;
}

struct figures {
  std::vector<double> last_key_to_suggestion;  // every burst whose last reply carries a suggestion
  std::vector<double> typed_along;             // those of them where the user typed a prediction
  int bursts = 0, with_suggestion = 0;
  int64_t kept = 0, kept_answers = 0;
};

figures replay(const options& o, bool reuse, const std::string& doc0, size_t start, const std::vector<burst>& script) {
  figures f;
  session s;
  if (!s.start(o, reuse, reuse ? "burst_replay.on.log" : "burst_replay.off.log", doc0) || !warm(s, start)) return f;
  std::mt19937 rng(o.seed);
  std::uniform_int_distribution<int> gap(o.min_gap_ms, o.max_gap_ms);
  for (const burst& b : script) {
    std::optional<int64_t> pending;
    bclock::time_point last{};
    for (size_t i = 0; i < b.text.size(); ++i) {
      if (i > 0) std::this_thread::sleep_for(std::chrono::milliseconds(gap(rng)));
      if (pending && !s.c.has_response(*pending)) s.c.notify("$/cancelRequest", json::object{{"id", *pending}});
      s.type(b.at + i, b.text[i]);
      last = bclock::now();
      pending = s.ask(b.at + i + 1, false);
    }
    ++f.bursts;
    const std::optional<received_message> rep = s.c.wait_response(*pending, std::chrono::seconds(60));
    if (rep && !session::suggestion(*rep, line_col(s.doc, b.at + b.text.size()).second).empty()) {
      ++f.with_suggestion;
      f.last_key_to_suggestion.push_back(ms(last, rep->at));
      if (b.predicted > 0) f.typed_along.push_back(ms(last, rep->at));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(o.pause_ms));
    s.type(b.at + b.text.size(), ' ');
  }
  const int64_t sid = s.c.request("quickfill/stats", json::object{{"recent", 0}});
  if (const std::optional<received_message> sr = s.c.wait_response(sid, std::chrono::seconds(30)))
    if (const json::value* in = sr->body.as_object().at("result").as_object().if_contains("inflight")) {
      f.kept = in->at("kept").to_number<int64_t>();
      f.kept_answers = in->at("answered").to_number<int64_t>();
    }
  stop_server(s.c);
  return f;
}

void print(const char* name, const figures& f) {
  std::printf("  inflightReuse %-3s  last key -> suggestion p50 %6.1f ms  p90 %6.1f ms  (%d of %d bursts with one); "
              "typed along p50 %6.1f ms  p90 %6.1f ms (%zu); generations kept %lld, answers from them %lld\n",
              name, pct(f.last_key_to_suggestion, 50), pct(f.last_key_to_suggestion, 90), f.with_suggestion, f.bursts,
              pct(f.typed_along, 50), pct(f.typed_along, 90), f.typed_along.size(), static_cast<long long>(f.kept),
              static_cast<long long>(f.kept_answers));
}

}  // namespace

int main(int argc, char** argv) {
  options o;
  arg_reader args("burst_replay", argc, argv);
  while (args.next()) {
    if (args.is("--model")) o.model = args.value();
    else if (args.is("--quickfill")) o.quickfill = args.value();
    else if (args.is("--file")) o.file = args.value();
    else if (args.is("--bursts")) o.bursts = args.int_value();
    else if (args.is("--min-gap-ms")) o.min_gap_ms = args.int_value();
    else if (args.is("--max-gap-ms")) o.max_gap_ms = args.int_value();
    else if (args.is("--pause-ms")) o.pause_ms = args.int_value();
    else if (args.is("--word-chars")) o.word_chars = args.int_value();
    else if (args.is("--deadline-ms")) o.deadline_ms = args.int_value();
    else if (args.is("--threads")) o.threads = args.int_value();
    else if (args.is("--rounds")) o.rounds = args.int_value();
    else if (args.is("--seed")) o.seed = args.unsigned_value();
    else if (args.is("--settings")) o.settings = args.value();
    else {
      std::puts(
          "usage: burst_replay --model FILE.gguf [--quickfill BIN] [--file SRC] [--bursts N] [--min-gap-ms N]\n"
          "         [--max-gap-ms N] [--pause-ms N] [--word-chars N] [--deadline-ms N] [--threads N]\n"
          "         [--rounds N] [--seed N] [--settings JSON (the completion section)]");
      return args.usage_status();
    }
  }
  if (o.model.empty()) {
    std::fprintf(stderr, "burst_replay: --model is required\n");
    return 2;
  }
  boost::system::error_code ec;
  if (json::value v = json::parse(o.settings, ec); ec || !v.is_object()) {
    std::fprintf(stderr, "burst_replay: --settings is not a JSON object\n");
    return 2;
  }
  const std::optional<std::string> source = read_source(o.file);
  if (!source) {
    std::fprintf(stderr, "burst_replay: cannot read %s\n", o.file.c_str());
    return 1;
  }
  const std::string& full = *source;
  // Type from the start of the line at 40 % of the file; the real text that
  // followed gives each burst its first character.
  const size_t start = line_start_at(full, 0.4);
  const std::string real = full.substr(start, 400);
  const std::string doc0 = full.substr(0, start) + "\n" + full.substr(start + real.size());

  const std::vector<burst> script = make_script(o, doc0, start, real);
  if (script.empty()) {
    std::fprintf(stderr, "burst_replay: the oracle made no bursts\n");
    return 1;
  }
  size_t chars = 0, predicted = 0;
  for (const burst& b : script) chars += b.text.size(), predicted += b.predicted;
  std::printf("burst_replay: %zu bursts, %zu keystrokes (%zu of them typed what the model predicted), gaps %d-%d ms, "
              "pause %d ms, budget %d ms\n",
              script.size(), chars, predicted, o.min_gap_ms, o.max_gap_ms, o.pause_ms, o.deadline_ms);
  for (int r = 0; r < o.rounds; ++r) {
    print("off", replay(o, false, doc0, start, script));
    print("on", replay(o, true, doc0, start, script));
  }
  return 0;
}
