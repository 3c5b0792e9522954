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
#include <immintrin.h>
#include <sys/mman.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>

#include "bench/kernels/bench_common.h"
#include "inference/backend/cpu/ops.h"
#include "inference/core/huge_pages.h"

namespace {

__attribute__((target("avx2"))) uint64_t read_avx2(const uint8_t* p, size_t n) {
  __m256i a0 = _mm256_setzero_si256(), a1 = a0, a2 = a0, a3 = a0;
  for (size_t i = 0; i + 128 <= n; i += 128) {
    a0 = _mm256_add_epi64(a0, _mm256_load_si256(reinterpret_cast<const __m256i*>(p + i)));
    a1 = _mm256_add_epi64(a1, _mm256_load_si256(reinterpret_cast<const __m256i*>(p + i + 32)));
    a2 = _mm256_add_epi64(a2, _mm256_load_si256(reinterpret_cast<const __m256i*>(p + i + 64)));
    a3 = _mm256_add_epi64(a3, _mm256_load_si256(reinterpret_cast<const __m256i*>(p + i + 96)));
  }
  a0 = _mm256_add_epi64(_mm256_add_epi64(a0, a1), _mm256_add_epi64(a2, a3));
  alignas(32) uint64_t v[4];
  _mm256_store_si256(reinterpret_cast<__m256i*>(v), a0);
  return v[0] + v[1] + v[2] + v[3];
}

uint64_t read_scalar(const uint8_t* p, size_t n) {
  const auto* q = reinterpret_cast<const uint64_t*>(p);
  uint64_t s0 = 0, s1 = 0, s2 = 0, s3 = 0;
  for (size_t i = 0; i + 4 <= n / 8; i += 4) s0 += q[i], s1 += q[i + 1], s2 += q[i + 2], s3 += q[i + 3];
  return s0 + s1 + s2 + s3;
}

}  // namespace

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
      pool.run([&](int ith, int nth) {
        const size_t chunk = (bytes / static_cast<size_t>(nth)) & ~size_t{4095};
        const uint8_t* p = buf + chunk * static_cast<size_t>(ith);
        const size_t n = ith == nth - 1 ? bytes - chunk * static_cast<size_t>(ith) : chunk;
        sink = sink + (avx2 ? read_avx2(p, n) : read_scalar(p, n));
      });
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
