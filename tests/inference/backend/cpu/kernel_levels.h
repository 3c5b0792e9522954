// Test helpers for the CPU kernel levels: which ones this CPU runs, and a
// guard that puts the automatic choice back when a test that forced one ends.
#pragma once

#include <string>
#include <vector>

#include "inference/backend/cpu/ops.h"

namespace qf::test {

struct kernel_level_guard {
  ~kernel_level_guard() { infer::cpu::set_kernel_level("auto"); }
};

// The CPU features each level's kernels need (the dispatcher's rule).
inline bool kernel_level_available(const std::string& level) {
  const auto& f = infer::cpu::detect_cpu();
  const bool avx2 = f.avx2 && f.fma && f.f16c;
  if (level == "avx2") return avx2;
  if (level == "avx512") return avx2 && f.avx512f && f.avx512bw && f.avx512vl && f.avx512vnni;
  return true;
}

// "scalar", then every SIMD level this CPU runs.
inline std::vector<std::string> available_kernel_levels() {
  std::vector<std::string> levels{"scalar"};
  for (const char* l : {"avx2", "avx512"})
    if (kernel_level_available(l)) levels.push_back(l);
  return levels;
}

}  // namespace qf::test
