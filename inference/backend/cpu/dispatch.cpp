// CPU feature detection and kernel-level selection.
//
// The best level the CPU supports is picked once ("auto"): AVX-512 needs
// F/BW/VL/VNNI, AVX2 needs AVX2/FMA/F16C. Tables are built by copying the
// lower level and letting each ISA file override what it accelerates, so a
// level is always complete. The AVX-512 kernels prefetch against one token
// on Intel cores only (measured: faster there, slower on AMD Zen 4).
#include <stdexcept>
#include <string>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

#include "inference/backend/cpu/kernels.h"
#include "inference/backend/cpu/ops.h"

namespace qf::infer::cpu {
namespace {

cpu_features probe() {
  cpu_features f;
#if defined(__x86_64__) || defined(__i386__)
  __builtin_cpu_init();
  f.avx2 = __builtin_cpu_supports("avx2");
  f.fma = __builtin_cpu_supports("fma");
  // CPUID leaf 1, ECX bit 29 (clang's __builtin_cpu_supports has no "f16c").
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  f.f16c = __get_cpuid(1, &eax, &ebx, &ecx, &edx) && (ecx & (1u << 29)) != 0;
  f.avx512f = __builtin_cpu_supports("avx512f");
  f.avx512bw = __builtin_cpu_supports("avx512bw");
  f.avx512vl = __builtin_cpu_supports("avx512vl");
  f.avx512vnni = __builtin_cpu_supports("avx512vnni");
  f.intel = __builtin_cpu_is("intel");
#endif
  return f;
}

bool has_avx2(const cpu_features& f) { return f.avx2 && f.fma && f.f16c; }
bool has_avx512(const cpu_features& f) {
  return has_avx2(f) && f.avx512f && f.avx512bw && f.avx512vl && f.avx512vnni;
}

struct tables {
  detail::kernel_table avx2;
  detail::kernel_table avx512;
  // A fill function lives in a file compiled for its instruction set, so the
  // compiler may use that set in the function itself: it runs only where the
  // CPU has it (a table left unfilled is never selected, see set_kernel_level).
  tables() {
    const cpu_features& f = detect_cpu();
    avx2 = detail::scalar_kernels();
    if (has_avx2(f)) detail::fill_avx2_kernels(avx2);
    avx512 = avx2;
    if (has_avx512(f)) detail::fill_avx512_kernels(avx512, f.intel);
  }
};

const tables& all_tables() {
  static const tables t;
  return t;
}

enum class level { scalar, avx2, avx512 };

level best_level() {
  const auto& f = detect_cpu();
  if (has_avx512(f)) return level::avx512;
  if (has_avx2(f)) return level::avx2;
  return level::scalar;
}

level& current() {
  static level l = best_level();
  return l;
}

}  // namespace

const cpu_features& detect_cpu() {
  static const cpu_features f = probe();
  return f;
}

void set_kernel_level(std::string_view name) {
  const auto& f = detect_cpu();
  level want;
  if (name == "auto") want = best_level();
  else if (name == "scalar") want = level::scalar;
  else if (name == "avx2") want = has_avx2(f) ? level::avx2 : level::scalar;
  else if (name == "avx512") want = has_avx512(f) ? level::avx512 : best_level();
  else throw std::invalid_argument("unknown kernel level '" + std::string(name) + "' (scalar, avx2, avx512, auto)");
  current() = want;
}

std::string_view kernel_level() {
  switch (current()) {
    case level::avx512: return "avx512";
    case level::avx2: return "avx2";
    default: return "scalar";
  }
}

namespace detail {
const kernel_table& active_kernels() {
  switch (current()) {
    case level::avx512: return all_tables().avx512;
    case level::avx2: return all_tables().avx2;
    default: return scalar_kernels();
  }
}
}  // namespace detail

}  // namespace qf::infer::cpu
