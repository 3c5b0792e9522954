// remote_vs_local: keystroke latency (p50/p90 of complete(), from the request
// to the answer) of the remote source through a real llama-server on
// 127.0.0.1 against the local engine (make_completion_provider), on the same
// trace and the same model: FILE typed one character at a time from --from
// (default: 200) for --chars keystrokes, a completion at every keystroke with
// the cursor at the end of what was typed (the rest of the file after it).
// Both sides use the same completion settings (stop rules on, type-through
// off so every keystroke really goes to the model) and a budget of
// --budget-ms. llama-server runs with --threads (default 1: on a shared machine a second spinning thread stalls) and one slot; the
// remote side is llama-infill (/infill, cache_prompt) unless --openai.
//
// usage: remote_vs_local [--model M.gguf] [--file F] [--from N] [--chars N] [--budget-ms N]
//                        [--threads N] [--openai]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <boost/json.hpp>

#include "text/lines.h"
#include "bench/bench_stats.h"
#include "server/completion/pipeline/provider_factory.h"
#include "server/completion/api/source_failure.h"
#include "server/remote/remote_source.h"
#include "tests/llama_server.h"

using namespace qf;
using bclock = std::chrono::steady_clock;
using qf::bench::quantile;

namespace {

struct figures {
  std::vector<double> ms;
  int answered = 0, failed = 0, empty = 0;
};

figures replay(server::completion_provider& p, const std::string& text, std::size_t from, int chars, int budget_ms) {
  figures f;
  for (int k = 0; k < chars && from + static_cast<std::size_t>(k) < text.size(); ++k) {
    const std::size_t at = from + static_cast<std::size_t>(k) + 1;
    const std::string doc = text.substr(0, at) + text.substr(text.find('\n', at) == std::string::npos
                                                                   ? text.size()
                                                                   : text.find('\n', at));
    server::completion_request r;
    r.uri = "file:///bench/sample.py";
    r.version = k + 1;
    r.language_id = "python";
    r.text = doc;
    const auto lc = text::line_col_of_offset(doc, at);
    r.cursor = {lc.line, lc.col};
    r.inline_request = true;
    r.received = bclock::now();
    r.deadline = r.received + std::chrono::milliseconds(budget_ms);
    const auto t0 = bclock::now();
    try {
      auto res = p.complete(r, {});
      ++f.answered;
      if (res.items.empty()) ++f.empty;
    } catch (const server::source_failure& e) {
      ++f.failed;
      if (f.failed == 1) std::fprintf(stderr, "remote_vs_local: %s\n", e.what());
    }
    f.ms.push_back(std::chrono::duration<double, std::milli>(bclock::now() - t0).count());
  }
  return f;
}

void print(const char* name, const figures& f) {
  std::printf("%-34s keystrokes %3zu  p50 %7.2f ms  p90 %7.2f ms  max %7.2f ms  answered %d (empty %d), failed %d\n",
              name, f.ms.size(), quantile(f.ms, 0.5), quantile(f.ms, 0.9), f.ms.empty() ? 0 : *std::max_element(f.ms.begin(), f.ms.end()),
              f.answered, f.empty, f.failed);
}

}  // namespace

int main(int argc, char** argv) {
  std::string model = QUICKFILL_TINY_MODEL, file = QUICKFILL_SAMPLE;
  int from = 200, chars = 120, budget = 400, threads = 1;
  bool openai = false;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto val = [&]() -> std::string { return i + 1 < argc ? argv[++i] : ""; };
    if (a == "--model") model = val();
    else if (a == "--file") file = val();
    else if (a == "--from") from = std::atoi(val().c_str());
    else if (a == "--chars") chars = std::atoi(val().c_str());
    else if (a == "--budget-ms") budget = std::atoi(val().c_str());
    else if (a == "--threads") threads = std::atoi(val().c_str());
    else if (a == "--openai") openai = true;
    else {
      std::fprintf(stderr, "usage: remote_vs_local [--model M] [--file F] [--from N] [--chars N] [--budget-ms N] "
                           "[--threads N] [--openai]\n");
      return 2;
    }
  }
  if (test::llama_server::binary().empty()) {
    std::fprintf(stderr, "remote_vs_local: %s\n", test::llama_server::skip_reason().c_str());
    return 1;
  }
  std::ifstream in(file);
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string text = ss.str();
  if (text.size() < static_cast<std::size_t>(from) + 2) {
    std::fprintf(stderr, "remote_vs_local: %s is too short\n", file.c_str());
    return 1;
  }
  server::completion::completion_settings cs;
  cs.type_through = false;
  cs.prefetch = false;

  std::string err;
  const std::string log = (std::filesystem::temp_directory_path() / "qf_remote_vs_local_llama.log").string();
  test::llama_server srv(model, {"-c", "2048", "-np", "1", "-t", std::to_string(threads), "--no-warmup"}, log);
  if (!srv.ok()) {
    std::fprintf(stderr, "remote_vs_local: %s\n", srv.error().c_str());
    return 1;
  }
  const std::string json = std::string(R"({"name": "bench", "kind": ")") + (openai ? "openai" : "llama-infill") +
                           R"(", "maxTokens": 64, "maxPrefixChars": 600, "maxSuffixChars": 150, "maxExtraChars": 300, )" + (openai ? R"("fimTemplate": "starcoder", )" : "") +
                           R"("endpoints": [")" + srv.url() + R"("]})";
  auto opts = remote::parse_remote_source(boost::json::parse(json).as_object(), &err);
  auto remote = opts ? remote::make_remote_source(*opts, &err) : nullptr;
  if (!remote) {
    std::fprintf(stderr, "remote_vs_local: %s\n", err.c_str());
    return 1;
  }
  remote->configure(cs);

  std::printf("remote_vs_local: %s, model %s, %d keystrokes from byte %d, budget %d ms, %d thread(s) each\n",
              std::filesystem::path(file).filename().c_str(), std::filesystem::path(model).filename().c_str(), chars,
              from, budget, threads);
  // The remote side first, then the local engine (made only then: its worker
  // threads would compete with llama-server's for the cores). Each is warmed
  // with one request (not counted), then replays the same trace.
  replay(*remote, text, static_cast<std::size_t>(from), 1, 5000);
  const figures fr = replay(*remote, text, static_cast<std::size_t>(from), chars, budget);
  srv.stop();
  server::provider_options po;
  po.model_path = model;
  po.completion = cs;
  po.engine.device = "cpu";
  po.engine.threads = threads;
  auto local = server::make_completion_provider(po, &err);
  if (!local) {
    std::fprintf(stderr, "remote_vs_local: local engine: %s\n", err.c_str());
    return 1;
  }

  replay(*local, text, static_cast<std::size_t>(from), 1, 5000);
  const figures fl = replay(*local, text, static_cast<std::size_t>(from), chars, budget);
  print("local engine (in process)", fl);
  print(openai ? "remote /v1/completions (llama-server)" : "remote /infill (llama-server)", fr);
  return 0;
}
