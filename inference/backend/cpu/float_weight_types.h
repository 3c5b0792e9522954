// The element types of the float-weight kernels (f32, f16, bf16) and their
// scalar conversion to f32 (the tail of a row), shared by the AVX2 and
// AVX-512 files, whose vector loads of these types differ. Include it only
// from files compiled with F16C (after immintrin_avx512.h in AVX-512 files).
// Internal linkage on purpose, as simd_reduce.h.
#pragma once

#include <immintrin.h>

#include <cstdint>

#include "inference/core/ggml_types.h"

namespace qf::infer::cpu::detail {
namespace {

struct bf16_tag {  // a bf16 weight (the dot templates tell it from an f16 by type)
  uint16_t v;
};
inline float to_f32(float v) { return v; }
inline float to_f32(fp16_t v) { return _cvtsh_ss(v); }
inline float to_f32(bf16_tag v) { return bf16_to_f32(v.v); }

}  // namespace
}  // namespace qf::infer::cpu::detail
