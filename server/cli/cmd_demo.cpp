// `quickfill demo`: drives the real server the way an editor does. It starts
// `quickfill --stdio` as a child process (the same binary), initializes it,
// opens a sample source file with its first N characters removed, and types
// those characters back one at a time: each keystroke is a didChange plus a
// textDocument/completion, and the next keystroke cancels a request still in
// flight (the server answers it with ContentModified). It prints every answer
// with its latency and ends with a summary. When no model could be loaded it
// says so plainly and shows the empty answers the server really sends.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <boost/json.hpp>

#include "server/cli/commands.h"
#include "server/cli/lsp_client.h"
#include "server/model_locator.h"
#include "server/stats.h"

namespace qf::cli {

namespace json = boost::json;
namespace fs = std::filesystem;
using steady = std::chrono::steady_clock;
using std::chrono::milliseconds;

namespace {

struct demo_options {
  std::string model;
  std::string file;
  std::string log_file;
  std::size_t chars = 300;
  int interval_ms = 150;
  bool inline_mode = false;
};

const char* demo_usage =
    "usage: quickfill demo [--model PATH] [--chars N] [--interval-ms N] [--inline] [--log-file PATH] [FILE]\n"
    "  Types the first N characters (default 300) of FILE (default: a sample from examples/)\n"
    "  into the real server, one keystroke every --interval-ms (default 150), with a\n"
    "  completion request per keystroke, and prints the answers and their latency.\n";

std::string find_sample() {
  std::vector<fs::path> dirs;
  const std::string exe_dir = server::executable_dir();
  if (!exe_dir.empty()) dirs.push_back(fs::path(exe_dir) / ".." / "share" / "quickfill" / "examples");
#ifdef QUICKFILL_SOURCE_DIR
  dirs.push_back(fs::path(QUICKFILL_SOURCE_DIR) / "examples");
#endif
  for (const auto& d : dirs) {
    std::error_code ec;
    fs::path p = (d / "sample.py").lexically_normal();
    if (fs::is_regular_file(p, ec)) return p.string();
  }
  return {};
}

std::string language_of(const std::string& path) {
  static const std::map<std::string, std::string> ids = {
      {".py", "python"}, {".c", "c"}, {".h", "c"}, {".cpp", "cpp"}, {".cc", "cpp"}, {".hpp", "cpp"},
      {".rs", "rust"}, {".go", "go"}, {".js", "javascript"}, {".ts", "typescript"}, {".lua", "lua"},
      {".java", "java"}, {".sh", "shellscript"}};
  auto it = ids.find(fs::path(path).extension().string());
  return it == ids.end() ? "plaintext" : it->second;
}

std::size_t utf8_len(unsigned char c) {
  if (c >= 0xF0) return 4;
  if (c >= 0xE0) return 3;
  if (c >= 0xC0) return 2;
  return 1;
}

std::string printable(std::string s, std::size_t max) {
  std::string out;
  for (char c : s) {
    if (c == '\n') out += "\\n";
    else if (c == '\t') out += "\\t";
    else if (c == '\r') out += "\\r";
    else out += c;
  }
  if (out.size() > max) out = out.substr(0, max - 3) + "...";
  return out;
}

json::value request(int id, const char* method, json::value params) {
  return json::object{{"jsonrpc", "2.0"}, {"id", id}, {"method", method}, {"params", std::move(params)}};
}

json::value notification(const char* method, json::value params) {
  return json::object{{"jsonrpc", "2.0"}, {"method", method}, {"params", std::move(params)}};
}

bool parse_args(std::span<char*> args, demo_options& o) {
  for (std::size_t i = 1; i < args.size(); ++i) {
    std::string a = args[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= args.size()) throw std::runtime_error(a + " needs a value");
      return args[++i];
    };
    if (a == "--help" || a == "-h") {
      std::fputs(demo_usage, stdout);
      return false;
    } else if (a == "--model") {
      o.model = value();
    } else if (a == "--chars") {
      o.chars = std::stoul(value());
    } else if (a == "--interval-ms") {
      o.interval_ms = std::stoi(value());
    } else if (a == "--log-file") {
      o.log_file = value();
    } else if (a == "--inline") {
      o.inline_mode = true;
    } else if (!a.empty() && a[0] == '-') {
      throw std::runtime_error("unknown option " + a);
    } else {
      o.file = a;
    }
  }
  return true;
}

class demo_session {
 public:
  explicit demo_session(lsp_client& c) : client_(c) {}

  // Handles one server message that is not the awaited response.
  void handle_other(const json::value& m) {
    const json::object& o = m.as_object();
    const json::value* method = o.if_contains("method");
    if (method && o.contains("id")) {  // a server->client request: accept it
      client_.send(json::object{{"jsonrpc", "2.0"}, {"id", o.at("id")}, {"result", nullptr}});
      return;
    }
    if (method && *method == "window/showMessage") {
      std::printf("server says: %s\n", json::value_to<std::string>(o.at("params").at("message")).c_str());
    } else if (method && *method == "$/progress") {
      const json::value& v = o.at("params").at("value");
      if (v.as_object().contains("message"))
        std::printf("  loading: %s\n", json::value_to<std::string>(v.at("message")).c_str());
    }
  }

  // Waits for the response to `id`, handling everything else on the way.
  std::optional<json::value> await(std::int64_t id, milliseconds timeout) {
    const auto until = steady::now() + timeout;
    for (;;) {
      auto left = std::chrono::duration_cast<milliseconds>(until - steady::now());
      if (left.count() <= 0) return std::nullopt;
      auto m = client_.next(left);
      if (!m) return std::nullopt;
      const json::object& o = m->as_object();
      if (!o.contains("method") && o.contains("id") && o.at("id").is_int64() && o.at("id").as_int64() == id)
        return m;
      if (!o.contains("method")) {
        responses_.push_back(std::move(*m));
        continue;
      }
      handle_other(*m);
    }
  }

  std::vector<json::value> take_responses() { return std::exchange(responses_, {}); }

 private:
  lsp_client& client_;
  std::vector<json::value> responses_;
};

}  // namespace

int cmd_demo(std::span<char*> args) {
  demo_options opt;
  try {
    if (!parse_args(args, opt)) return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "quickfill demo: %s\n%s", e.what(), demo_usage);
    return 2;
  }
  if (opt.file.empty()) opt.file = find_sample();
  if (opt.file.empty()) {
    std::fprintf(stderr, "quickfill demo: no sample file found; pass FILE\n");
    return 2;
  }
  std::ifstream in(opt.file, std::ios::binary);
  if (!in) {
    std::fprintf(stderr, "quickfill demo: cannot read %s\n", opt.file.c_str());
    return 2;
  }
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string content = ss.str();
  // Type whole UTF-8 characters: cut at a character boundary.
  std::size_t typed_bytes = 0, typed_chars = 0;
  while (typed_bytes < content.size() && typed_chars < opt.chars) {
    typed_bytes += utf8_len(static_cast<unsigned char>(content[typed_bytes]));
    ++typed_chars;
  }
  typed_bytes = std::min(typed_bytes, content.size());
  const std::string typed = content.substr(0, typed_bytes);

  std::error_code ec;
  fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (ec) {
    std::fprintf(stderr, "quickfill demo: cannot find my own executable\n");
    return 1;
  }
  std::vector<std::string> argv = {exe.string(), "--stdio", "--log-level", opt.log_file.empty() ? "warn" : "debug"};
  if (!opt.log_file.empty()) argv.insert(argv.end(), {"--log-file", opt.log_file});
  if (!opt.model.empty()) argv.insert(argv.end(), {"--model", opt.model});

  std::printf("quickfill demo: starting `%s --stdio` as an editor would\n", exe.string().c_str());
  lsp_client client;
  std::string error;
  if (!client.start(argv, "", &error)) {
    std::fprintf(stderr, "quickfill demo: %s\n", error.c_str());
    return 1;
  }
  demo_session session(client);
  const fs::path abs = fs::absolute(opt.file);
  const std::string uri = "file://" + abs.lexically_normal().string();

  int next_id = 1;
  client.send(request(next_id, "initialize",
                      json::object{{"processId", static_cast<std::int64_t>(::getpid())},
                                   {"rootUri", nullptr},
                                   {"capabilities",
                                    json::object{{"general", json::object{{"positionEncodings", json::array{"utf-8", "utf-16"}}}},
                                                 {"window", json::object{{"workDoneProgress", true}}}}}}));
  auto init = session.await(next_id++, milliseconds(30000));
  if (!init || !init->as_object().contains("result")) {
    std::fprintf(stderr, "quickfill demo: the server did not answer initialize\n");
    return 1;
  }
  const std::string encoding =
      json::value_to<std::string>(init->at("result").at("capabilities").at("positionEncoding"));
  client.send(notification("initialized", json::object{}));

  // Wait for the model to load (or to fail), showing progress.
  json::value status;
  const auto load_started = steady::now();
  for (;;) {
    client.send(request(next_id, "quickfill/status", nullptr));
    auto r = session.await(next_id++, milliseconds(30000));
    if (!r) {
      std::fprintf(stderr, "quickfill demo: no answer to quickfill/status\n");
      return 1;
    }
    status = r->at("result");
    if (!status.at("modelLoading").as_bool()) break;
    if (steady::now() - load_started > std::chrono::minutes(10)) break;
    std::this_thread::sleep_for(milliseconds(100));
  }
  const bool have_model = status.at("modelLoaded").as_bool();
  std::printf("position encoding: %s\n", encoding.c_str());
  if (have_model) {
    std::printf("model: %s (%s)\n", json::value_to<std::string>(status.at("model")).c_str(),
                json::value_to<std::string>(status.at("modelPath")).c_str());
  } else {
    std::printf("\n*** NO MODEL IS LOADED: completions will be empty. ***\n    reason: %s\n"
                "    (give one with: quickfill demo --model PATH.gguf)\n\n",
                status.as_object().contains("noModelReason")
                    ? json::value_to<std::string>(status.at("noModelReason")).c_str()
                    : "unknown");
  }

  // Open the file without the part we are about to type.
  int version = 1;
  client.send(notification("textDocument/didOpen",
                           json::object{{"textDocument", json::object{{"uri", uri},
                                                                      {"languageId", language_of(opt.file)},
                                                                      {"version", version},
                                                                      {"text", content.substr(typed_bytes)}}}}));
  std::printf("typing %zu characters of %s, one every %d ms, with a %s request per keystroke\n\n", typed_chars,
              opt.file.c_str(), opt.interval_ms, opt.inline_mode ? "textDocument/inlineCompletion" : "textDocument/completion");

  struct pending_req {
    steady::time_point sent;
    std::size_t keystroke;
    std::string line_prefix;
  };
  std::map<std::int64_t, pending_req> pending;
  std::vector<double> latencies;
  std::size_t answered = 0, with_items = 0, modified = 0, other_cancel = 0, errors = 0;
  std::uint32_t line = 0, col = 0;  // UTF-8 bytes (or UTF-16 units when the server insisted)
  std::string line_text;

  auto handle_response = [&](const json::value& m) {
    const json::object& o = m.as_object();
    if (!o.at("id").is_int64()) return;
    auto it = pending.find(o.at("id").as_int64());
    if (it == pending.end()) return;
    const double ms = std::chrono::duration<double, std::milli>(steady::now() - it->second.sent).count();
    if (const json::value* err = o.if_contains("error")) {
      const auto code = err->at("code").as_int64();
      if (code == -32801) ++modified;
      else if (code == -32800) ++other_cancel;
      else {
        ++errors;
        std::printf("[%3zu] error %lld: %s\n", it->second.keystroke, static_cast<long long>(code),
                    json::value_to<std::string>(err->at("message")).c_str());
      }
    } else {
      ++answered;
      latencies.push_back(ms);
      const json::value& result = o.at("result");
      const json::array& items = result.at("items").as_array();
      std::string shown = "(no items)";
      if (!items.empty()) {
        ++with_items;
        const json::value& first = items[0];
        shown = "-> \"" +
                printable(json::value_to<std::string>(opt.inline_mode ? first.at("insertText")
                                                                       : first.at("textEdit").at("newText")),
                          60) +
                "\"";
        if (items.size() > 1) shown += " (+" + std::to_string(items.size() - 1) + " more)";
      }
      std::printf("[%3zu] %8.1f ms  %-34s %s\n", it->second.keystroke, ms,
                  ("\"" + printable(it->second.line_prefix, 30) + "|\"").c_str(), shown.c_str());
    }
    pending.erase(it);
  };

  const bool utf16 = encoding == "utf-16";
  for (std::size_t i = 0, k = 0; i < typed.size(); ++k) {
    const std::size_t n = utf8_len(static_cast<unsigned char>(typed[i]));
    const std::string ch = typed.substr(i, n);
    i += n;
    ++version;
    client.send(notification(
        "textDocument/didChange",
        json::object{{"textDocument", json::object{{"uri", uri}, {"version", version}}},
                     {"contentChanges",
                      json::array{json::object{{"range", json::object{{"start", json::object{{"line", line}, {"character", col}}},
                                                                      {"end", json::object{{"line", line}, {"character", col}}}}},
                                               {"text", ch}}}}}));
    if (ch == "\n") {
      ++line;
      col = 0;
      line_text.clear();
    } else {
      col += utf16 ? (n == 4 ? 2 : 1) : static_cast<std::uint32_t>(n);
      line_text += ch;
    }
    const std::int64_t id = next_id++;
    json::object params{{"textDocument", json::object{{"uri", uri}}},
                        {"position", json::object{{"line", line}, {"character", col}}}};
    if (opt.inline_mode)
      params["context"] = json::object{{"triggerKind", 2}};
    else
      params["context"] = json::object{{"triggerKind", 2}, {"triggerCharacter", ch}};
    pending[id] = pending_req{steady::now(), k, line_text};
    client.send(request(static_cast<int>(id), opt.inline_mode ? "textDocument/inlineCompletion" : "textDocument/completion",
                        std::move(params)));
    // Let the keystroke's answer arrive until the next keystroke is due.
    const auto due = steady::now() + milliseconds(opt.interval_ms);
    while (steady::now() < due) {
      auto m = client.next(std::chrono::duration_cast<milliseconds>(due - steady::now()) + milliseconds(1));
      if (!m) break;
      if (m->as_object().contains("method")) session.handle_other(*m);
      else handle_response(*m);
    }
  }
  // The last request gets its full budget.
  const auto drain_until = steady::now() + std::chrono::seconds(30);
  while (!pending.empty() && steady::now() < drain_until) {
    auto m = client.next(milliseconds(200));
    if (!m) continue;
    if (m->as_object().contains("method")) session.handle_other(*m);
    else handle_response(*m);
  }
  for (const auto& r : session.take_responses()) handle_response(r);

  client.send(request(next_id, "quickfill/stats", json::object{{"recent", 0}}));
  auto stats = session.await(next_id++, milliseconds(10000));
  client.send(request(next_id, "shutdown", nullptr));
  session.await(next_id++, milliseconds(10000));
  client.send(notification("exit", nullptr));
  client.close_stdin();
  bool timed_out = false;
  const int code = client.wait_exit(milliseconds(10000), &timed_out);

  const server::percentiles p = server::compute_percentiles(latencies);
  std::printf("\nsummary: %zu keystrokes; %zu answered (%zu with items), %zu cancelled by the next edit "
              "(-32801), %zu otherwise cancelled, %zu errors\n",
              typed_chars, answered, with_items, modified, other_cancel, errors);
  std::printf("client-side latency of answered requests: p50 %.1f ms, p90 %.1f ms, max %.1f ms\n", p.p50, p.p90,
              p.max);
  if (stats && stats->as_object().contains("result")) {
    const json::value& s = stats->at("result");
    std::printf("server stats: %lld requests, ttft p50 %.1f ms, total p50 %.1f ms / p90 %.1f ms, cache hit rate %.2f, "
                "cancel-to-free p50 %.2f ms\n",
                static_cast<long long>(s.at("requests").to_number<std::int64_t>()),
                s.at("ttftMs").at("p50").to_number<double>(), s.at("totalMs").at("p50").to_number<double>(),
                s.at("totalMs").at("p90").to_number<double>(), s.at("cacheHitRate").to_number<double>(),
                s.at("cancelToFreeMs").at("p50").to_number<double>());
  }
  if (!have_model) std::printf("no model was loaded: every answer above is the honest empty list.\n");
  std::printf("server exited with code %d%s\n", code, timed_out ? " (timed out)" : "");
  return (code == 0 && errors == 0) ? 0 : 1;
}

}  // namespace qf::cli
