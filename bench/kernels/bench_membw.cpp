// Stream-style read bandwidth: sums a buffer much larger than the caches with
// 1 and 2 threads (the thread pool the kernels use) and prints the median
// GB/s over several passes. This is the ceiling decode GEMV is compared to.
// GB per CPU-second (process CPU time) is printed too: on a shared machine it
// compares with bench_matmul's GB/CPU-s column when wall-clock time is diluted.
// The buffer is mapped the way the model's weights are (map_huge: huge pages
// where the kernel allows); --pages small reads 4 KiB pages instead, which
// shows what the TLB costs on this machine.
//
//   bench_membw [--mib 512] [--reps 9] [--threads 1,2] [--pages huge|small]
#include <sys/mman.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>

#include "bench/kernels/bench_common.h"
#include "bench/kernels/bench_read.h"
#include "inference/backend/cpu/ops.h"
#include "inference/core/huge_pages.h"

int main(int argc, char** argv) {
  using namespace qf;
  const size_t bytes = static_cast<size_t>(std::atoll(bench::arg(argc, argv, "--mib", "512").c_str())) << 20;
  const int reps = std::atoi(bench::arg(argc, argv, "--reps", "9").c_str());
  const auto threads = bench::split(bench::arg(argc, argv, "--threads", "1,2"), ',');
  const bool avx2 = infer::cpu::detect_cpu().avx2;

  const bool small = bench::arg(argc, argv, "--pages", "huge") == "small";
  auto* buf = static_cast<uint8_t*>(small ? std::aligned_alloc(4096, bytes) : infer::map_huge(bytes));
  if (!buf) return 1;
  for (size_t i = 0; i < bytes; i += 64) std::memset(buf + i, static_cast<int>(i >> 6), 64);  // touch every page

  std::printf("bench_membw: %zu MiB buffer (%s pages), %d passes, read with %s\n", bytes >> 20,
              small ? "4 KiB" : "huge where available", reps, avx2 ? "AVX2" : "scalar");
  volatile uint64_t sink = 0;
  for (const auto& ts : threads) {
    const int nt = std::atoi(ts.c_str());
    infer::cpu::thread_pool pool(nt);
    std::vector<double> gbs, gb_cpu;
    for (int r = 0; r < reps + 1; ++r) {
      const double t0 = bench::now_s(), c0 = bench::cpu_s();
      sink = sink + bench::read_once(pool, buf, bytes);
      const double dt = bench::now_s() - t0, dc = bench::cpu_s() - c0;
      if (r > 0) {  // the first pass is a warm-up
        gbs.push_back(static_cast<double>(bytes) / dt / 1e9);
        gb_cpu.push_back(static_cast<double>(bytes) / dc / 1e9);
      }
    }
    std::printf("threads %d: read bandwidth %.2f GB/s (median of %d; min %.2f, max %.2f); %.2f GB per CPU-second\n", nt,
                bench::median(gbs), reps, *std::min_element(gbs.begin(), gbs.end()),
                *std::max_element(gbs.begin(), gbs.end()), bench::median(gb_cpu));
  }
  if (small) std::free(buf);
  else munmap(buf, bytes);
  return 0;
}
