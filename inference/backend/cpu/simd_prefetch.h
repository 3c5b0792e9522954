// Software prefetch of the weight stream (and of the activation blocks a
// K-quant group kernel reads next), for the x86 kernel files.
//
// A decode GEMV reads every weight once, front to back, and does little work
// per byte; on the 2-core AMD EPYC (Zen 3, AVX2) machines the hardware
// prefetchers alone left one thread at about 11 GB/s of a 15 GB/s read
// bandwidth. Asking for the line k_prefetch_bytes ahead of each block keeps
// enough misses in flight: 4864x896 Q8_0 GEMV went from 11.0 to 14.8-15.5
// GB/s on one thread and 17.5 to 22.4-23.3 GB/s on two (bench_matmul; 256 and
// 512 bytes ahead did nothing, 4096 and 8192 less than 2048-3072). Prefetches
// past the end of a matrix are harmless (a prefetch never faults).
#pragma once

#include <immintrin.h>

#include <cstddef>

namespace qf::infer::cpu::simd {
namespace {

inline constexpr std::ptrdiff_t k_prefetch_bytes = 2048;

// Prefetch the Bytes-long block that lies k_prefetch_bytes after p (one
// request per cache line it covers).
template <std::size_t Bytes>
inline void prefetch_ahead(const void* p) {
  const char* c = static_cast<const char*>(p) + k_prefetch_bytes;
  for (std::size_t o = 0; o < Bytes; o += 64) _mm_prefetch(c + o, _MM_HINT_T0);
}

// Prefetch every cache line of the Bytes at p, wherever it starts: a Q8_K
// activation block (292 bytes) that a K-quant group kernel reads next. A
// group of long rows streams more weights between two reads of the same
// activation block than the L1 holds, so each block comes back from L2 once
// per group, and asked for one block ahead it is there when the broadcasts
// need it.
template <std::size_t Bytes>
inline void prefetch_lines(const void* p) {
  const char* c = static_cast<const char*>(p);
  for (std::size_t o = 0; o < Bytes; o += 64) _mm_prefetch(c + o, _MM_HINT_T0);
  if (Bytes % 64 != 0) _mm_prefetch(c + Bytes - 1, _MM_HINT_T0);
}

}  // namespace
}  // namespace qf::infer::cpu::simd
