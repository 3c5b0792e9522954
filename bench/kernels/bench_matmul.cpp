// Matmul throughput per weight type at Qwen2.5-Coder-0.5B shapes: decode
// (GEMV, one token) and prefill (GEMM, a batch of tokens), 1 and 2 threads,
// median over repetitions. GEMV also reports GB/s of weights streamed; small
// matrices are cycled through enough copies to exceed the caches, as the
// layers of a real model are, so GB/s means DRAM bandwidth.
//
//   bench_matmul [--types q8_0,q4_0,q4_k,q6_k,...] [--shapes 896x896,...]
//                [--threads 1,2] [--reps 7] [--tokens 64] [--level auto] [--mib 256]
//                [--layout plain] [--pages huge|small]
// --layout plain drops the copies prepare_weight regroups at load (Q5_0's
// eight-block groups), so the same run can measure the kernel on the GGUF
// layout against it. Weights lie on huge pages where the kernel allows, as a
// loaded model's do: the copies come from one huge_arena and their regrouped
// forms from another, so a matrix smaller than a huge page shares one with
// the next copy (mapped on its own, it would get small pages). --pages small
// keeps them on 4 KiB pages, where the hardware prefetchers stop at every
// page boundary and software prefetch matters more (on a Zen 4 core,
// 4864x896 Q8_0 GEMV streamed 14.9 GB/s without it on small pages). Q5_0's
// regrouped copy is on huge pages either way.
#include <cstdio>
#include <cstring>
#include <memory>
#include <optional>
#include <cstdlib>
#include <random>
#include <string>

#include "bench/kernels/bench_common.h"
#include "inference/backend/cpu/ops.h"
#include "inference/core/huge_pages.h"

using namespace qf;
using namespace qf::infer;

namespace {

std::optional<ggml_type> type_by_name(const std::string& s) {
  for (ggml_type t : {ggml_type::f32, ggml_type::f16, ggml_type::bf16, ggml_type::q8_0, ggml_type::q4_0,
                      ggml_type::q4_1, ggml_type::q5_0, ggml_type::q5_1, ggml_type::q4_k, ggml_type::q5_k, ggml_type::q6_k})
    if (traits(t).name == s) return t;
  return std::nullopt;
}

}  // namespace

int main(int argc, char** argv) {
  const auto types = bench::split(bench::arg(argc, argv, "--types", "f16,q8_0,q4_0,q4_k,q5_k,q6_k"), ',');
  const auto shapes =
      bench::split(bench::arg(argc, argv, "--shapes", "896x896,128x896,4864x896,896x4864,151936x896"), ',');
  const auto threads = bench::split(bench::arg(argc, argv, "--threads", "1,2"), ',');
  const int reps = std::atoi(bench::arg(argc, argv, "--reps", "7").c_str());
  const int64_t n_tok = std::atoll(bench::arg(argc, argv, "--tokens", "64").c_str());
  cpu::set_kernel_level(bench::arg(argc, argv, "--level", "auto"));
  // Copies of each matrix are cycled until this many MiB are touched per pass
  // (0: one copy, i.e. measure the kernel on cache-resident weights).
  const bool plain_layout = bench::arg(argc, argv, "--layout", "auto") == "plain";
  const size_t min_working_set = static_cast<size_t>(std::atoll(bench::arg(argc, argv, "--mib", "256").c_str())) << 20;
  const bool small_pages = bench::arg(argc, argv, "--pages", "huge") == "small";

  std::printf("bench_matmul: kernel level %s, %s layout, %s pages, GEMM with %lld tokens, median of %d\n",
              std::string(cpu::kernel_level()).c_str(), plain_layout ? "plain" : "load-time", small_pages ? "small" : "huge",
              static_cast<long long>(n_tok), reps);
  std::printf("%-6s %-12s %3s | %9s %9s %8s %11s | %12s\n", "type", "rows x cols", "thr", "GEMV us", "GEMV GB/s",
              "GFLOP/s", "GB/CPU-s", "GEMM GFLOP/s");
  for (const auto& tn : types) {
    auto type = type_by_name(tn);
    if (!type) {
      std::fprintf(stderr, "unknown type %s\n", tn.c_str());
      return 1;
    }
    for (const auto& sh : shapes) {
      const auto dims = bench::split(sh, 'x');
      const int64_t rows = std::atoll(dims.at(0).c_str()), cols = std::atoll(dims.at(1).c_str());
      if (!row_size(*type, cols)) {
        std::printf("%-6s %-12s     (skipped: %lld columns do not fit %s blocks)\n", tn.c_str(), sh.c_str(),
                    static_cast<long long>(cols), tn.c_str());
        continue;
      }
      const size_t wbytes = *row_size(*type, cols) * static_cast<size_t>(rows);
      // As many copies as the working set needs (a 128x896 Q8_0 matrix takes
      // over two thousand), of up to eight distinct contents.
      const size_t copies = std::clamp<size_t>(min_working_set / wbytes + 1, 1, 8192);
      huge_arena plain_arena, prepared_arena;
      std::vector<std::shared_ptr<uint8_t[]>> data;
      std::vector<cpu::weight_matrix> mats;
      std::vector<std::vector<uint8_t>> contents;
      for (size_t c = 0; c < copies; ++c) {
        if (contents.size() < 8) contents.push_back(bench::random_weights(*type, rows, cols, static_cast<uint32_t>(c + 1)));
        const auto& bytes = contents[c % contents.size()];
        data.push_back(small_pages ? std::shared_ptr<uint8_t[]>(new uint8_t[bytes.size()]) : plain_arena.allocate(bytes.size()));
        std::memcpy(data.back().get(), bytes.data(), bytes.size());
        mats.push_back(cpu::prepare_weight(*type, rows, cols, data.back().get(), small_pages ? nullptr : &prepared_arena));
        if (plain_layout) mats.back().repacked.reset();
      }
      std::vector<float> x(static_cast<size_t>(cols * n_tok));
      std::mt19937 rng(1);
      std::normal_distribution<float> nd;
      for (auto& v : x) v = nd(rng);
      std::vector<float> y(static_cast<size_t>(rows * n_tok));
      for (const auto& ts : threads) {
        cpu::thread_pool pool(std::atoi(ts.c_str()));
        // GEMV: each repetition streams every copy once.
        std::vector<double> per_call, per_call_cpu;
        for (int r = 0; r < reps + 1; ++r) {
          const double t0 = bench::now_s(), c0 = bench::cpu_s();
          for (const auto& m : mats) cpu::matmul(pool, m, x.data(), 1, y.data());
          if (r > 0) {
            per_call.push_back((bench::now_s() - t0) / static_cast<double>(copies));
            per_call_cpu.push_back((bench::cpu_s() - c0) / static_cast<double>(copies));
          }
        }
        const double tc = bench::median(per_call_cpu);
        const double tv = bench::median(per_call);
        // GEMM on one copy.
        std::vector<double> gemm;
        const int gemm_reps = rows * cols > 50'000'000 ? 2 : reps;
        for (int r = 0; r < gemm_reps + 1; ++r) {
          const double t0 = bench::now_s();
          cpu::matmul(pool, mats[0], x.data(), n_tok, y.data());
          if (r > 0) gemm.push_back(bench::now_s() - t0);
        }
        const double tg = bench::median(gemm);
        const double flops = 2.0 * static_cast<double>(rows) * static_cast<double>(cols);
        std::printf("%-6s %-12s %3s | %9.1f %9.2f %8.2f %11.2f | %12.2f\n", tn.c_str(), sh.c_str(), ts.c_str(),
                    tv * 1e6, static_cast<double>(wbytes) / tv / 1e9, flops / tv / 1e9,
                    static_cast<double>(wbytes) / tc / 1e9, flops * static_cast<double>(n_tok) / tg / 1e9);
        std::fflush(stdout);
      }
    }
  }
  return 0;
}
