// Decode's weight streaming against the machine's read bandwidth, measured
// moments apart. A pass is either --tokens N decode steps of a loaded model
// (greedy, from a 16-token prompt, rolled back after each pass; weight bytes
// x tokens/s, as `quickfill bench` reports) or, by default, every matrix of
// the model once in forward order as a decode step multiplies them (one
// activation row, q/k/v and gate/up together, the CPU backend's matmuls and
// thread pool), timed per stage. Each pass is bracketed by two streaming
// reads, with the same pool, of a buffer as large as the weights; its share
// is its GB/s over the mean of its two brackets.
//
// Why: on a shared VM the read bandwidth two cores get jumps between levels
// within seconds (33-36 and 50-66 GB/s on one Zen 4 machine), so a share
// against a figure taken a minute earlier means little. A pass here takes
// tens of milliseconds; passes whose brackets differ by more than 10 % are
// counted as unsteady and left out. When the steady passes' read figures
// span more than 1.4x, they are also split at the midpoint and each level's
// share is reported apart. The matrices alone leave out norms, attention and
// the rest of a token: they are the ceiling of the GEMV path, about 95 % of
// a 0.5B token.
//
//   bench_decode_share FILE.gguf [--threads 2] [--passes 60] [--tokens N]
//                      [--level auto] [--read-ahead on|off|ab] [--list]
// --level forces a kernel level as bench_matmul's does (avx2 on an AVX-512
// core stands in for a core without AVX-512; its memory system is not one).
// --read-ahead ab alternates passes with the workers' read-ahead between
// decode matmuls (cpu::gemv_order) on and off and reports each apart.
#include <sys/mman.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "bench/kernels/bench_common.h"
#include "bench/kernels/bench_read.h"
#include "inference/backend/cpu/ops.h"
#include "inference/backend/cpu_backend.h"
#include "inference/core/huge_pages.h"
#include "inference/model/context.h"
#include "inference/model/model.h"
#include "inference/model/weights.h"

using namespace qf;
using namespace qf::infer;

namespace {

struct pass_figures {
  double read_before, gemv, read_after;  // GB/s
  std::vector<double> kind_gbs;          // GB/s of each stage (q/k/v, o, ...) in this pass
  double read() const { return (read_before + read_after) / 2; }
  bool steady() const { return std::abs(read_before - read_after) <= 0.1 * read(); }
  double share() const { return gemv / read(); }
};

void print_level(const char* name, const std::vector<pass_figures>& v, const std::vector<std::string>& stages) {
  if (v.empty()) {
    std::printf("%-6s no steady passes\n", name);
    return;
  }
  std::vector<double> read, gemv, share;
  for (const auto& p : v) read.push_back(p.read()), gemv.push_back(p.gemv), share.push_back(p.share());
  std::printf("%-6s %3zu passes: read %6.2f GB/s, decode %6.2f GB/s, share %5.1f %% (medians)\n", name,
              v.size(), bench::median(read), bench::median(gemv), 100 * bench::median(share));
  if (v[0].kind_gbs.empty()) return;
  std::printf("      by stage, GB/s (share):");
  for (size_t k = 0; k < stages.size(); ++k) {
    std::vector<double> g, sh;
    for (const auto& p : v) g.push_back(p.kind_gbs[k]), sh.push_back(p.kind_gbs[k] / p.read());
    std::printf(" %s %.1f (%.0f %%)", stages[k].c_str(), bench::median(g), 100 * bench::median(sh));
  }
  std::printf("\n");
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || argv[1][0] == '-') {
    std::fprintf(stderr, "usage: bench_decode_share FILE.gguf [--threads 2] [--passes 60] [--tokens N] [--level auto] "
                 "[--read-ahead on|off|ab] [--list]\n");
    return 2;
  }
  const int n_threads = std::atoi(bench::arg(argc, argv, "--threads", "2").c_str());
  const int passes = std::atoi(bench::arg(argc, argv, "--passes", "60").c_str());
  const int tokens = std::atoi(bench::arg(argc, argv, "--tokens", "0").c_str());
  cpu::set_kernel_level(bench::arg(argc, argv, "--level", "auto"));
  const std::string read_ahead = bench::arg(argc, argv, "--read-ahead", "on");
  if (read_ahead != "on" && read_ahead != "off" && read_ahead != "ab") {
    std::fprintf(stderr, "bench_decode_share: --read-ahead takes on, off or ab\n");
    return 2;
  }
  bool list = false;
  for (int i = 2; i < argc; ++i) list |= std::strcmp(argv[i], "--list") == 0;

  model_options mo;
  mo.n_threads = n_threads;
  mo.device = "cpu";
  auto m = model::load(argv[1], mo);
  auto& be = dynamic_cast<cpu_backend&>(m->be());

  // Every product a decode step computes, in forward order, grouped as the
  // forward pass groups them (q/k/v and gate/up go to matmul_many together);
  // each group's stage ("q/k/v", "o", ...) is timed over all layers.
  struct group {
    size_t stage;
    std::vector<const weight*> ws;
  };
  const std::vector<std::string> stages = {"q/k/v", "o", "gate/up", "down", "output"};
  std::vector<group> groups;
  const auto add = [&](size_t stage, std::initializer_list<const weight_ptr*> ps) {
    group g{stage, {}};
    for (const auto* p : ps)
      if (*p) g.ws.push_back(p->get());
    if (!g.ws.empty()) groups.push_back(std::move(g));
  };
  const auto& w = m->weights();
  for (const auto& l : w.layers) {
    add(0, {&l.wq, &l.wk, &l.wv});
    add(1, {&l.wo});
    add(2, {&l.ffn_gate, &l.ffn_up});
    add(3, {&l.ffn_down});
  }
  groups.push_back({4, {&w.classifier()}});
  std::vector<size_t> stage_bytes(stages.size());
  size_t weight_bytes = 0, n_mats = 0;
  int64_t max_rows = 0, max_cols = 0;
  for (const auto& g : groups)
    for (const auto* mt : g.ws) {
      const size_t bytes = *row_size(mt->type(), mt->cols()) * static_cast<size_t>(mt->rows());
      weight_bytes += bytes;
      stage_bytes[g.stage] += bytes;
      ++n_mats;
      max_rows = std::max(max_rows, mt->rows());
      max_cols = std::max(max_cols, mt->cols());
      if (list)
        std::printf("  %-8s %-6s %6lld x %-6lld\n", stages[g.stage].c_str(), std::string(traits(mt->type()).name).c_str(),
                    static_cast<long long>(mt->rows()), static_cast<long long>(mt->cols()));
    }

  auto x = be.alloc(static_cast<size_t>(max_cols) * sizeof(float));
  buffer_ptr ys[3];  // one output per product of a group
  for (auto& y : ys) y = be.alloc(static_cast<size_t>(max_rows) * sizeof(float));
  std::vector<float> xs(static_cast<size_t>(max_cols));
  std::mt19937 rng(1);
  std::normal_distribution<float> nd;
  for (auto& v : xs) v = nd(rng);
  be.upload(*x, 0, xs.data(), xs.size() * sizeof(float));

  const size_t read_bytes = (weight_bytes + 4095) & ~size_t{4095};
  auto* buf = static_cast<uint8_t*>(map_huge(read_bytes));
  if (!buf) return 1;
  for (size_t i = 0; i < read_bytes; i += 64) std::memset(buf + i, static_cast<int>(i >> 6), 64);

  std::printf("bench_decode_share: %s, %zu matrices, %.1f MiB of weights, %d threads, %d passes of %s\n",
              m->describe().c_str(), n_mats, weight_bytes / 1048576.0, n_threads, passes,
              tokens > 0 ? (std::to_string(tokens) + " decode steps").c_str() : "the matrices");
  auto& pool = be.pool();
  volatile uint64_t sink = 0;
  const auto read_gbs = [&] {
    const double t0 = bench::now_s();
    sink = sink + bench::read_once(pool, buf, read_bytes);
    return static_cast<double>(read_bytes) / (bench::now_s() - t0) / 1e9;
  };
  std::vector<double> stage_s(stages.size());
  const auto gemv_gbs = [&] {
    std::fill(stage_s.begin(), stage_s.end(), 0.0);
    const double t0 = bench::now_s();
    double t = t0;
    for (const auto& g : groups) {
      if (g.ws.size() == 1) be.matmul(*g.ws[0], *x, 1, *ys[0]);
      else if (g.ws.size() == 2) be.matmul_many({{g.ws[0], *ys[0]}, {g.ws[1], *ys[1]}}, *x, 1);
      else be.matmul_many({{g.ws[0], *ys[0]}, {g.ws[1], *ys[1]}, {g.ws[2], *ys[2]}}, *x, 1);
      const double t1 = bench::now_s();
      stage_s[g.stage] += t1 - t;
      t = t1;
    }
    be.synchronize();
    return static_cast<double>(weight_bytes) / (bench::now_s() - t0) / 1e9;
  };
  const auto kind_gbs = [&] {
    std::vector<double> g(stages.size());
    for (size_t k = 0; k < stages.size(); ++k) g[k] = static_cast<double>(stage_bytes[k]) / stage_s[k] / 1e9;
    return g;
  };
  context ctx(*m, context_options{.n_ctx = 64 + tokens});
  std::vector<int32_t> prompt(16);
  for (size_t i = 0; i < prompt.size(); ++i) prompt[i] = static_cast<int32_t>((i * 7919) % w.classifier().rows());
  const auto decode_gbs = [&] {
    ctx.keep_first(0);
    ctx.eval(prompt, logits_mode::last, {}, output_kind::argmax);
    const double t0 = bench::now_s();
    for (int i = 0; i < tokens; ++i) {
      const int32_t tok = ctx.argmax();
      ctx.eval(std::span(&tok, 1), logits_mode::last, {}, output_kind::argmax);
    }
    return static_cast<double>(m->weight_bytes()) * tokens / (bench::now_s() - t0) / 1e9;
  };
  const auto pass = [&](std::vector<double>& kg) {
    if (tokens > 0) return decode_gbs();
    const double g = gemv_gbs();
    kg = kind_gbs();
    return g;
  };

  std::vector<double> kg;
  be.set_read_ahead(read_ahead != "off");
  pass(kg);  // warm-up: first touch of the activation buffers, the cache and the thread pool
  double before = read_gbs();
  std::vector<pass_figures> all;
  const auto ahead = [&](size_t i) { return read_ahead == "on" || (read_ahead == "ab" && i % 2 == 0); };
  for (int i = 0; i < passes; ++i) {
    be.set_read_ahead(ahead(static_cast<size_t>(i)));
    const double g = pass(kg);
    const double after = read_gbs();
    all.push_back({before, g, after, kg});
    before = after;
  }
  munmap(buf, read_bytes);

  double lo = 1e30, hi = 0;
  size_t n_steady = 0;
  for (const auto& p : all)
    if (p.steady()) ++n_steady, lo = std::min(lo, p.read()), hi = std::max(hi, p.read());
  std::printf("%zu of %zu passes steady (brackets within 10 %%)\n", n_steady, all.size());
  for (const bool on : {true, false}) {
    std::vector<pass_figures> steady, low, high;
    for (size_t i = 0; i < all.size(); ++i)
      if (ahead(i) == on && all[i].steady()) steady.push_back(all[i]);
    if (read_ahead == "ab") std::printf("read-ahead %s:\n", on ? "on" : "off");
    else if (on != (read_ahead == "on")) continue;
    for (const auto& p : steady) (p.read() > (lo + hi) / 2 ? high : low).push_back(p);
    print_level("all", steady, stages);
    if (hi > 1.4 * lo) {  // two levels seen: report each
      print_level("low", low, stages);
      print_level("high", high, stages);
    }
  }
  return 0;
}
