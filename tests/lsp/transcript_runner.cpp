// Runs one LSP transcript (tests/lsp/transcripts/*.test) against a real
// server binary over stdio and checks every response.
//
// Transcript lines:
//   # ...                     comment
//   #! server: NAME           quickfill (default) or quickfill_test_server
//   #! args: A B ...          extra command-line arguments
//   --> {json}                send one framed message
//   -->raw TEXT               send raw bytes; escapes \r \n \t \\ \xNN
//   -->big N                  send a frame whose body is N bytes
//   <-- {pattern}             wait for a message matching the pattern
//   -->reply {result}         answer the last matched server->client request
//   close-stdin               close the server's input
//   exit-code N               wait for the server to exit with code N
//   count N {pattern}         at the end: exactly N received messages match
//   config {json}             write the user config file (mode 0600; the
//                             server reads it at initialize and at each
//                             didChangeConfiguration)
//   config-chmod MODE         chmod the user config file (octal)
//
// The server runs with XDG_CONFIG_HOME set to a fresh directory of its own
// (no user config file unless a `config` line writes one), whose path
// replaces @CONFIG_HOME@ in every line.
// A pattern matches a message when every key it lists matches (extra keys
// are allowed), arrays match element by element with equal length, and the
// strings "{{any}}", "{{absent}}" (the key must be missing) and
// "{{contains:TEXT}}" are wildcards. Expectations are matched against the
// received messages not yet matched, in any order, so that asynchronous
// notifications do not make a transcript flaky. At the end every response
// the server sent must have been expected: a duplicate or unexpected reply
// fails the test, which is how "answered exactly once" and "notifications
// are never answered" are checked. Waits are bounded only to catch a hung
// server; nothing here measures time.
#include <sys/stat.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <boost/json.hpp>

#include "lsp/client/lsp_client.h"
#include "lsp/transport.h"

namespace json = boost::json;
using std::chrono::milliseconds;

namespace {

constexpr milliseconds hang_guard(30000);

std::filesystem::path g_config_home;  // removed when the runner ends, failed or not

bool matches(const json::value& pattern, const json::value& actual);

bool matches_object(const json::object& p, const json::value& actual) {
  if (!actual.is_object()) return false;
  const json::object& a = actual.get_object();
  for (const auto& [key, pv] : p) {
    const json::value* av = a.if_contains(key);
    if (pv.is_string() && pv.get_string() == "{{absent}}") {
      if (av) return false;
      continue;
    }
    if (!av || !matches(pv, *av)) return false;
  }
  return true;
}

bool matches(const json::value& pattern, const json::value& actual) {
  if (pattern.is_string()) {
    std::string_view s = pattern.get_string();
    if (s == "{{any}}") return true;
    if (s.rfind("{{contains:", 0) == 0 && s.size() > 13 && s.substr(s.size() - 2) == "}}") {
      return actual.is_string() &&
             std::string_view(actual.get_string()).find(s.substr(11, s.size() - 13)) != std::string_view::npos;
    }
    return actual.is_string() && actual.get_string() == s;
  }
  if (pattern.is_object()) return matches_object(pattern.get_object(), actual);
  if (pattern.is_array()) {
    if (!actual.is_array() || actual.get_array().size() != pattern.get_array().size()) return false;
    for (std::size_t i = 0; i < pattern.get_array().size(); ++i)
      if (!matches(pattern.get_array()[i], actual.get_array()[i])) return false;
    return true;
  }
  if (pattern.is_number() && actual.is_number()) return pattern.to_number<double>() == actual.to_number<double>();
  return pattern == actual;
}

std::string unescape(const std::string& s) {
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '\\' || i + 1 >= s.size()) {
      out += s[i];
      continue;
    }
    char c = s[++i];
    if (c == 'r') out += '\r';
    else if (c == 'n') out += '\n';
    else if (c == 't') out += '\t';
    else if (c == 'x' && i + 2 < s.size() + 1) {
      out += static_cast<char>(std::stoi(s.substr(i + 1, 2), nullptr, 16));
      i += 2;
    } else out += c;
  }
  return out;
}

struct runner {
  qf::lsp::lsp_client client;
  std::vector<json::value> received;
  std::vector<bool> consumed;
  json::value last_server_request;
  std::string file;
  int line_no = 0;
  bool exited = false;

  [[noreturn]] void fail(const std::string& why) {
    std::fprintf(stderr, "%s:%d: FAILED: %s\n", file.c_str(), line_no, why.c_str());
    std::fprintf(stderr, "messages received so far:\n");
    for (std::size_t i = 0; i < received.size(); ++i)
      std::fprintf(stderr, "  %s %s\n", consumed[i] ? "[matched]" : "[pending]", json::serialize(received[i]).c_str());
    for (const auto& b : client.bad_output()) std::fprintf(stderr, "  bad output: %s\n", b.c_str());
    client.kill_child();
    std::error_code ec;
    std::filesystem::remove_all(g_config_home, ec);
    std::exit(1);
  }

  bool pull(milliseconds timeout) {
    auto m = client.next(timeout);
    if (!m) return false;
    received.push_back(std::move(m->body));
    consumed.push_back(false);
    return true;
  }

  void expect(const json::value& pattern) {
    std::size_t scanned = 0;
    const auto until = std::chrono::steady_clock::now() + hang_guard;
    for (;;) {
      for (; scanned < received.size(); ++scanned) {
        if (!consumed[scanned] && matches(pattern, received[scanned])) {
          consumed[scanned] = true;
          const json::object& o = received[scanned].as_object();
          if (o.contains("method") && o.contains("id")) last_server_request = received[scanned];
          return;
        }
      }
      auto left = std::chrono::duration_cast<milliseconds>(until - std::chrono::steady_clock::now());
      if (left.count() <= 0 || !pull(left)) fail("no message matching " + json::serialize(pattern));
    }
  }
};

}  // namespace

int main(int argc, char** argv) {
  std::signal(SIGPIPE, SIG_IGN);
  std::string quickfill, test_server, file;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--quickfill" && i + 1 < argc) quickfill = argv[++i];
    else if (a == "--test-server" && i + 1 < argc) test_server = argv[++i];
    else file = a;
  }
  std::ifstream in(file);
  if (!in) {
    std::fprintf(stderr, "usage: transcript_runner --quickfill PATH --test-server PATH FILE.test\n");
    return 2;
  }
  std::vector<std::string> lines;
  for (std::string l; std::getline(in, l);) lines.push_back(l);

  runner r;
  r.file = file;
  std::string server = quickfill;
  std::vector<std::string> extra;
  for (const auto& l : lines) {
    if (l.rfind("#! server:", 0) == 0) {
      std::string name = l.substr(10);
      name.erase(0, name.find_first_not_of(' '));
      server = name == "quickfill_test_server" ? test_server : quickfill;
    } else if (l.rfind("#! args:", 0) == 0) {
      std::istringstream ss(l.substr(8));
      for (std::string a; ss >> a;) extra.push_back(a);
    }
  }
  // A user config directory of this run only (never the real user's).
  const std::filesystem::path config_home =
      std::filesystem::temp_directory_path() / ("qf-transcript-config-" + std::to_string(::getpid()));
  std::filesystem::remove_all(config_home);
  std::filesystem::create_directories(config_home / "quickfill");
  ::setenv("XDG_CONFIG_HOME", config_home.c_str(), 1);
  g_config_home = config_home;
  struct remove_at_exit {
    ~remove_at_exit() {
      std::error_code ec;
      std::filesystem::remove_all(g_config_home, ec);
    }
  } cleanup;
  const std::string config_file = (config_home / "quickfill" / "config.json").string();
  for (auto& l : lines)
    for (std::size_t at; (at = l.find("@CONFIG_HOME@")) != std::string::npos;)
      l.replace(at, 13, config_home.string());

  std::vector<std::string> argv_child = {server, "--stdio"};
  argv_child.insert(argv_child.end(), extra.begin(), extra.end());
  std::string error;
  if (!r.client.start(argv_child, {}, &error)) {
    std::fprintf(stderr, "cannot start %s: %s\n", server.c_str(), error.c_str());
    return 1;
  }

  std::vector<std::pair<int, json::value>> counts;
  for (const auto& raw : lines) {
    ++r.line_no;
    std::string l = raw;
    if (l.empty() || l[0] == '#') continue;
    auto rest = [&](std::size_t n) { return l.size() > n ? l.substr(n) : std::string(); };
    auto parse = [&](const std::string& text) {
      boost::system::error_code ec;
      json::value v = json::parse(text, ec);
      if (ec) r.fail("bad JSON in the transcript: " + text);
      return v;
    };
    if (l.rfind("-->raw ", 0) == 0) {
      r.client.send_raw(unescape(rest(7)));
    } else if (l.rfind("-->big ", 0) == 0) {
      const std::size_t n = std::stoul(rest(7));
      r.client.send_raw(qf::lsp::frame_message(std::string(n, ' ')));
    } else if (l.rfind("-->reply ", 0) == 0) {
      if (r.last_server_request.is_null()) r.fail("-->reply without a matched server request");
      r.client.respond(r.last_server_request.at("id"), parse(rest(9)));
    } else if (l.rfind("--> ", 0) == 0) {
      r.client.send(parse(rest(4)));
    } else if (l.rfind("<-- ", 0) == 0) {
      r.expect(parse(rest(4)));
    } else if (l == "close-stdin") {
      r.client.close_stdin();
    } else if (l.rfind("exit-code ", 0) == 0) {
      const int want = std::stoi(rest(10));
      bool timed_out = false;
      const int got = r.client.wait_exit(hang_guard, &timed_out);
      if (timed_out) r.fail("the server did not exit");
      if (got != want) r.fail("exit code " + std::to_string(got) + ", expected " + std::to_string(want));
      r.exited = true;
    } else if (l.rfind("config ", 0) == 0) {
      const json::value v = parse(rest(7));
      std::ofstream(config_file, std::ios::trunc) << json::serialize(v);
      ::chmod(config_file.c_str(), 0600);
    } else if (l.rfind("config-chmod ", 0) == 0) {
      ::chmod(config_file.c_str(), static_cast<mode_t>(std::stoul(rest(13), nullptr, 8)));
    } else if (l.rfind("count ", 0) == 0) {
      std::string body = rest(6);
      std::size_t sp = body.find(' ');
      counts.emplace_back(std::stoi(body.substr(0, sp)), parse(body.substr(sp + 1)));
    } else {
      r.fail("unknown transcript line: " + l);
    }
  }
  ++r.line_no;
  if (!r.exited) {
    r.client.close_stdin();
    bool timed_out = false;
    r.client.wait_exit(hang_guard, &timed_out);
    if (timed_out) r.fail("the server did not exit after its input closed");
  }
  while (r.pull(milliseconds(2000))) {
  }
  for (const auto& [n, pattern] : counts) {
    int got = 0;
    for (const auto& m : r.received) got += matches(pattern, m) ? 1 : 0;
    if (got != n)
      r.fail(std::to_string(got) + " messages match " + json::serialize(pattern) + ", expected " + std::to_string(n));
  }
  for (std::size_t i = 0; i < r.received.size(); ++i) {
    const json::object& o = r.received[i].as_object();
    if (!r.consumed[i] && !o.contains("method")) r.fail("unexpected response " + json::serialize(r.received[i]));
  }
  if (!r.client.bad_output().empty()) r.fail("the server wrote malformed output");
  std::printf("%s: %zu messages checked\n", file.c_str(), r.received.size());
  return 0;
}
