// Shared helpers of the kernel benchmarks: timing, medians, argument parsing,
// random weights.
#pragma once

#include <algorithm>
#include <chrono>
#include <ctime>
#include <cstdlib>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "inference/core/ggml_types.h"

namespace qf::bench {

inline double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// CPU time of the whole process (all threads): on a shared machine, work per
// CPU-second shows kernel efficiency when wall-clock figures are diluted.
inline double cpu_s() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

inline double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0.0 : v[v.size() / 2];
}

// "--name value" lookup; returns fallback when absent.
inline std::string arg(int argc, char** argv, const char* name, const std::string& fallback) {
  for (int i = 1; i + 1 < argc; ++i)
    if (std::strcmp(argv[i], name) == 0) return argv[i + 1];
  return fallback;
}

inline std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= s.size()) {
    size_t end = s.find(sep, start);
    if (end == std::string::npos) end = s.size();
    if (end > start) out.push_back(s.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

// Valid weights without running the (slow) reference quantizers: random
// quants, then every scale field set to a small normal fp16 value.
inline std::vector<uint8_t> random_weights(infer::ggml_type t, int64_t rows, int64_t cols, uint32_t seed) {
  const size_t rb = *infer::row_size(t, cols);
  std::vector<uint8_t> w(rb * static_cast<size_t>(rows));
  std::mt19937_64 rng(seed);
  for (size_t i = 0; i + 8 <= w.size(); i += 8) {
    const uint64_t v = rng();
    std::memcpy(&w[i], &v, 8);
  }
  const infer::fp16_t small = infer::f32_to_fp16(0.01f);
  const size_t ts = infer::traits(t).type_size;
  const size_t nblocks = w.size() / ts;
  for (size_t b = 0; b < nblocks; ++b) {
    uint8_t* blk = w.data() + b * ts;
    switch (t) {
      case infer::ggml_type::q8_0: case infer::ggml_type::q4_0: std::memcpy(blk, &small, 2); break;
      case infer::ggml_type::q4_k: case infer::ggml_type::q5_k: std::memcpy(blk, &small, 2), std::memcpy(blk + 2, &small, 2); break;
      case infer::ggml_type::q6_k: std::memcpy(blk + 208, &small, 2); break;
      case infer::ggml_type::f16: std::memcpy(blk, &small, 2); break;
      case infer::ggml_type::bf16: { const infer::bf16_t v = infer::f32_to_bf16(0.01f); std::memcpy(blk, &v, 2); break; }
      case infer::ggml_type::f32: { const float v = 0.01f; std::memcpy(blk, &v, 4); break; }
      default: break;
    }
  }
  return w;
}

}  // namespace qf::bench
