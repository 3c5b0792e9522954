// Shared by the replay benchmarks: a real quickfill binary started over stdio
// with a model and completion settings, waited for until its model is loaded,
// and the small helpers a replay needs (the source file to type, percentiles,
// LSP positions, the suggestion text of a reply).
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include <boost/json.hpp>

#include "bench/bench_stats.h"
#include "lsp/client/lsp_client.h"

namespace qf::bench {

using bclock = std::chrono::steady_clock;

// The text of a source file to replay, line ends as "\n" (nullopt when it
// cannot be read).
inline std::optional<std::string> read_source(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::stringstream ss;
  ss << in.rdbuf();
  std::string text = ss.str();
  text.erase(std::remove(text.begin(), text.end(), '\r'), text.end());
  return text;
}

// Byte offset of the start of the line that follows offset `frac` of `text`
// (0 when there is none): where a replay begins typing.
inline size_t line_start_at(const std::string& text, double frac) {
  const size_t nl = text.find('\n', static_cast<size_t>(static_cast<double>(text.size()) * frac));
  return nl == std::string::npos ? 0 : nl + 1;
}

// The p-th percentile (p in [0, 100]): quantile(v, p / 100).
inline double pct(std::vector<double> v, double p) { return quantile(std::move(v), p / 100.0); }

// UTF-16 length of a UTF-8 string (LSP's default position encoding).
inline int64_t utf16_len(std::string_view s) {
  int64_t n = 0;
  for (unsigned char c : s) {
    if ((c & 0xC0) == 0x80) continue;
    n += c >= 0xF0 ? 2 : 1;
  }
  return n;
}

inline boost::json::object pos_json(int64_t line, int64_t ch) {
  return boost::json::object{{"line", line}, {"character", ch}};
}

inline double ms(bclock::time_point a, bclock::time_point b) {
  return std::chrono::duration<double, std::milli>(b - a).count();
}

// LSP position (line, UTF-16 column) of byte offset `off` in `doc`.
inline std::pair<int64_t, int64_t> line_col(std::string_view doc, size_t off) {
  const int64_t line = std::count(doc.begin(), doc.begin() + static_cast<long>(off), '\n');
  size_t ls = off == 0 ? std::string_view::npos : doc.rfind('\n', off - 1);
  ls = ls == std::string_view::npos ? 0 : ls + 1;
  return {line, utf16_len(doc.substr(ls, off - ls))};
}

// The items of a completion or inlineCompletion result (null: none).
inline const boost::json::array* result_items(const boost::json::object& reply) {
  const boost::json::value* res = reply.if_contains("result");
  if (!res) return nullptr;
  if (res->is_array()) return &res->as_array();
  if (res->is_object())
    if (const boost::json::value* it = res->as_object().if_contains("items")) return it->if_array();
  return nullptr;
}

// Starts `quickfill` with `settings` as initializationOptions and waits until
// its model is loaded. False with a message on stderr. A "model" in
// `settings` goes on the command line as --model: the server takes a model
// path only from the user (docs/security.md). `mode_args` choose the mode:
// in-process by default; {"--socket-dir", DIR, ...} makes it a bridge to the
// daemon of DIR (docs/daemon.md), started by the first bridge.
inline bool start_server(lsp::lsp_client& c, const std::string& quickfill, int threads, const std::string& log,
                         boost::json::object settings, const char* who,
                         const std::vector<std::string>& mode_args = {"--no-daemon"}) {
  lsp::client_options copts;
  copts.answer_server_requests = true;  // the server never waits on us
  std::string error;
  std::vector<std::string> argv = {quickfill, "--threads", std::to_string(threads), "--log-level", "debug",
                                   "--log-file", log};
  argv.insert(argv.begin() + 1, mode_args.begin(), mode_args.end());
  if (const boost::json::value* m = settings.if_contains("model"); m && m->is_string()) {
    argv.push_back("--model");
    argv.emplace_back(m->get_string());
    settings.erase("model");
  }
  if (!c.start(argv, copts, &error)) {
    std::fprintf(stderr, "%s: cannot start %s: %s\n", who, quickfill.c_str(), error.c_str());
    return false;
  }
  int64_t init = c.request("initialize", boost::json::object{{"processId", nullptr},
                                                             {"rootUri", nullptr},
                                                             {"capabilities", boost::json::object{}},
                                                             {"initializationOptions", settings}});
  if (!c.wait_response(init, std::chrono::seconds(30))) {
    std::fprintf(stderr, "%s: no answer to initialize from %s\n", who, quickfill.c_str());
    return false;
  }
  c.notify("initialized", boost::json::object{});
  const auto t_load = bclock::now();
  for (;;) {
    int64_t id = c.request("quickfill/status", boost::json::object{});
    const std::optional<lsp::received_message> rep = c.wait_response(id, std::chrono::seconds(10));
    if (!rep) return true;
    const boost::json::value* rp = rep->body.as_object().if_contains("result");
    if (!rp || !rp->is_object()) return true;
    const boost::json::object& r = rp->as_object();
    if (const boost::json::value* l = r.if_contains("modelLoaded"); l && l->is_bool() && l->as_bool()) return true;
    const boost::json::value* why = r.if_contains("noModelReason");
    const boost::json::value* loading = r.if_contains("modelLoading");
    if (why && why->is_string() && !why->as_string().empty() && !(loading && loading->is_bool() && loading->as_bool())) {
      std::fprintf(stderr, "%s: the server has no model: %s\n", who, why->as_string().c_str());
      return false;
    }
    if (ms(t_load, bclock::now()) > 300000) {
      std::fprintf(stderr, "%s: the model did not load within 300 s\n", who);
      return false;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
}

inline void stop_server(lsp::lsp_client& c) {
  int64_t sd = c.request("shutdown", nullptr);
  c.wait_response(sd, std::chrono::seconds(10));
  c.notify("exit", nullptr);
}

}  // namespace qf::bench
