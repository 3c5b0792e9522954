// The streaming read that bench_membw times and bench_decode_share compares
// decode with: sums a buffer, split into one contiguous part per thread of
// the pool the kernels use, so each core streams as a decode GEMV would.
#pragma once

#include <immintrin.h>

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "inference/backend/cpu/ops.h"
#include "inference/backend/cpu/thread_pool.h"

namespace qf::bench {

__attribute__((target("avx2"))) inline uint64_t read_avx2(const uint8_t* p, size_t n) {
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

inline uint64_t read_scalar(const uint8_t* p, size_t n) {
  const auto* q = reinterpret_cast<const uint64_t*>(p);
  uint64_t s0 = 0, s1 = 0, s2 = 0, s3 = 0;
  for (size_t i = 0; i + 4 <= n / 8; i += 4) s0 += q[i], s1 += q[i + 1], s2 += q[i + 2], s3 += q[i + 3];
  return s0 + s1 + s2 + s3;
}

// Reads buf[0, bytes) once with every thread of pool (bytes a multiple of 4 KiB).
inline uint64_t read_once(infer::cpu::thread_pool& pool, const uint8_t* buf, size_t bytes) {
  static const bool avx2 = infer::cpu::detect_cpu().avx2;
  std::atomic<uint64_t> sum{0};
  pool.run([&](int ith, int nth) {
    const size_t chunk = (bytes / static_cast<size_t>(nth)) & ~size_t{4095};
    const uint8_t* p = buf + chunk * static_cast<size_t>(ith);
    const size_t n = ith == nth - 1 ? bytes - chunk * static_cast<size_t>(ith) : chunk;
    sum.fetch_add(avx2 ? read_avx2(p, n) : read_scalar(p, n), std::memory_order_relaxed);
  });
  return sum.load();
}

}  // namespace qf::bench
