// `quickfill bench`: prompt processing (ppN) and text generation (tgN)
// throughput, measured like llama-bench.
//
// ppN: N random tokens evaluated as one prefill into an empty cache (logits of
// the last one only). tgN: N single-token decode steps into an empty cache,
// starting from BOS (or a random token), each followed by a random next token;
// each step reduces its logits to the greedy token on the backend and copies
// back only that id, as the completion pipeline does. -d D (like llama-bench's
// -d) first fills the cache with D random tokens, untimed, so the test runs at
// depth D ("tg128 @ d1024"): attention then reads D cached positions per step. On CUDA the steps are
// replayed CUDA graphs (QUICKFILL_STEP_GRAPHS=0 measures direct launches). One warm-up run, then -r repetitions; the
// figure is the median tokens/s (mean and standard deviation alongside). tg
// rows also show the decode bandwidth: weight bytes x tokens/s (every weight is
// read once per decoded token). -p/-n/-t accept comma-separated lists. Text
// table by default, --json for a JSON array.
//
// On a shared machine wall-clock figures are diluted by other processes, so
// the process CPU time of each run is measured too: "t/CPU-s" is tokens per
// CPU-second of this process, i.e. roughly what one fully available core
// gives (x threads is the unloaded estimate when the work scales).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <exception>
#include <random>
#include <sstream>

#include <ctime>

#include <boost/json.hpp>

#include "inference/model/context.h"
#include "inference/tokenizer/tokenizer.h"
#include "server/cli/cli_args.h"
#include "server/cli/cli_model.h"
#include "server/cli/commands.h"
#include "server/core/settings.h"

namespace qf::cli {
namespace {

bool parse_list(const std::string& s, std::vector<int64_t>& out) {
  out.clear();
  std::stringstream ss(s);
  std::string item;
  while (std::getline(ss, item, ',')) {
    int64_t v = 0;
    if (!parse_int(item, v) || v < 0) return false;
    out.push_back(v);
  }
  return !out.empty();
}

struct stats {
  double median = 0, mean = 0, stddev = 0;
};

double cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

stats summarize(std::vector<double> v) {
  stats s;
  if (v.empty()) return s;
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  s.median = n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
  for (double x : v) s.mean += x;
  s.mean /= static_cast<double>(n);
  for (double x : v) s.stddev += (x - s.mean) * (x - s.mean);
  s.stddev = n > 1 ? std::sqrt(s.stddev / static_cast<double>(n - 1)) : 0.0;
  return s;
}

}  // namespace

int cmd_bench(std::span<char*> args) {
  std::string model_path, pp_list = "512", tg_list = "128", th_list = "0", depth_list = "0", device = "auto";
  int64_t reps = 5, n_ubatch = 512;
  bool json = false;
  arg_parser p("quickfill bench",
               "Prompt processing (ppN) and generation (tgN) tokens/s, like llama-bench:\n"
               "one warm-up, then -r repetitions; the median is reported.");
  p.add_string({"-m", "--model"}, &model_path, "GGUF model file (required)");
  p.add_string({"-p", "--n-prompt"}, &pp_list, "prompt lengths, comma-separated; 0 skips (default 512)");
  p.add_string({"-n", "--n-gen"}, &tg_list, "generation lengths, comma-separated; 0 skips (default 128)");
  p.add_string({"-t", "--threads"}, &th_list, "thread counts, comma-separated; 0 = all cores (default 0)");
  p.add_string({"-d", "--n-depth"}, &depth_list,
               "cached tokens before each test, comma-separated (default 0)");
  p.add_int({"-r", "--repetitions"}, &reps, "repetitions per test (default 5)");
  p.add_int({"-b", "--ubatch"}, &n_ubatch, "prefill ubatch size (default 512)");
  p.add_string({"--device"}, &device, "auto | cpu | cuda (default auto)");
  p.add_flag({"--json"}, &json, "print a JSON array instead of a table");
  if (!p.parse(args)) return p.exit_code();
  std::vector<int64_t> pps, tgs, ths, depths;
  if (!parse_list(pp_list, pps) || !parse_list(tg_list, tgs) || !parse_list(th_list, ths) ||
      !parse_list(depth_list, depths)) {
    std::fprintf(stderr, "quickfill bench: -p/-n/-t/-d take comma-separated non-negative integers\n");
    return 2;
  }
  if (reps < 1) {
    std::fprintf(stderr, "quickfill bench: -r must be at least 1\n");
    return 2;
  }
  boost::json::array results;
  bool header = false;
  for (int64_t th : ths) {
    auto m = load_model_or_report("quickfill bench", model_path, static_cast<int>(th), device);
    if (!m) return 1;
    try {
      const auto& hp = m->hp();
      std::mt19937 rng(1234);
      std::uniform_int_distribution<int32_t> pick(0, static_cast<int32_t>(hp.n_vocab - 1));
      int64_t max_len = 1;
      for (auto v : pps) max_len = std::max(max_len, v);
      for (auto v : tgs) max_len = std::max(max_len, v + 1);
      max_len += *std::max_element(depths.begin(), depths.end());
      infer::context_options co;
      co.step_graphs = server::step_graphs_from_environment();  // QUICKFILL_STEP_GRAPHS=0: direct launches
      co.n_ctx = max_len;
      co.n_ubatch = n_ubatch;
      infer::context ctx(*m, co);
      const int32_t bos = m->vocab().special().bos;
      std::string desc = m->describe();
      if (!json && !header) {
        std::printf("model: %s\n", desc.c_str());
        std::printf("weights: %.2f MiB, %.1fM parameters (%s)\n\n", m->weight_bytes() / (1024.0 * 1024.0),
                    m->n_params() / 1e6, m->weight_type_name().c_str());
        std::printf("| %7s | %13s | %12s | %18s | %12s | %10s |\n", "threads", "test", "t/s (median)", "mean ± sd",
                    "weights GB/s", "t/CPU-s");
        std::printf("|--------:|--------------:|-------------:|-------------------:|-------------:|-----------:|\n");
        header = true;
      }
      auto run_test = [&](bool is_pp, int64_t n, int64_t depth) {
        std::vector<double> tps, tpcpu;
        for (int64_t r = -1; r < reps; ++r) {  // r == -1: warm-up
          ctx.clear();
          if (depth > 0) {  // untimed: the cache the test starts from
            std::vector<int32_t> toks(static_cast<size_t>(depth));
            for (auto& t : toks) t = pick(rng);
            ctx.eval(toks, infer::logits_mode::none);
          }
          double t0 = 0, c0 = cpu_seconds();
          if (is_pp) {
            std::vector<int32_t> toks(static_cast<size_t>(n));
            for (auto& t : toks) t = pick(rng);
            t0 = now_seconds();
            ctx.eval(toks, infer::logits_mode::last);
          } else {
            int32_t t = bos >= 0 && depth == 0 ? bos : pick(rng);
            t0 = now_seconds();
            for (int64_t i = 0; i < n; ++i) {
              int32_t one[1] = {t};
              ctx.eval(one, infer::logits_mode::last, {}, infer::output_kind::argmax);
              t = pick(rng);
            }
          }
          double dt = now_seconds() - t0, dc = cpu_seconds() - c0;
          if (r >= 0) {
            tps.push_back(dt > 0 ? n / dt : 0.0);
            tpcpu.push_back(dc > 0 ? n / dc : 0.0);
          }
        }
        stats s = summarize(tps), sc = summarize(tpcpu);
        std::string test = (is_pp ? "pp" : "tg") + std::to_string(n);
        if (depth > 0) test += " @ d" + std::to_string(depth);
        double gbs = is_pp ? 0.0 : s.median * static_cast<double>(m->weight_bytes()) / 1e9;
        if (json) {
          boost::json::array samples;
          for (double v : tps) samples.emplace_back(v);
          results.emplace_back(boost::json::object{
              {"model", model_path}, {"description", desc}, {"weight_type", m->weight_type_name()},
              {"weight_bytes", m->weight_bytes()}, {"n_params", m->n_params()}, {"n_threads", th},
              {"test", test}, {"n_tokens", n}, {"n_depth", depth}, {"repetitions", reps}, {"tokens_per_s_median", s.median},
              {"tokens_per_s_mean", s.mean}, {"tokens_per_s_stddev", s.stddev}, {"samples", samples},
              {"weight_gb_per_s", gbs},
              {"tokens_per_cpu_s_median", sc.median}});
        } else {
          char ms[64], bw[32] = "";
          std::snprintf(ms, sizeof ms, "%.2f ± %.2f", s.mean, s.stddev);
          if (!is_pp) std::snprintf(bw, sizeof bw, "%.2f", gbs);
          std::printf("| %7lld | %13s | %12.2f | %18s | %12s | %10.2f |\n", static_cast<long long>(th), test.c_str(),
                      s.median, ms, bw, sc.median);
          std::fflush(stdout);
        }
      };
      for (int64_t d : depths) {
        for (int64_t n : pps)
          if (n > 0) run_test(true, n, d);
        for (int64_t n : tgs)
          if (n > 0) run_test(false, n, d);
      }
    } catch (const std::exception& e) {
      std::fprintf(stderr, "quickfill bench: %s\n", e.what());
      return 1;
    }
  }
  if (json) std::printf("%s\n", boost::json::serialize(results).c_str());
  return 0;
}

}  // namespace qf::cli
