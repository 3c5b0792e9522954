// Type traits and exact scalar fp16/bf16 conversions.
//
// The conversions are written with integer bit manipulation (plus one exact
// float scaling for fp16 subnormals) so that they are bit-exact on any x86-64
// CPU, with or without F16C, and round to nearest even like the hardware does.
#include "inference/core/ggml_types.h"

#include <bit>
#include <cmath>
#include <limits>

namespace qf::infer {
namespace {

struct entry {
  ggml_type type;
  type_traits tr;
};

constexpr entry k_types[] = {
    {ggml_type::f32, {"f32", 1, 4}},
    {ggml_type::f16, {"f16", 1, 2}},
    {ggml_type::q4_0, {"q4_0", qk4_0, sizeof(block_q4_0)}},
    {ggml_type::q4_1, {"q4_1", qk4_1, sizeof(block_q4_1)}},
    {ggml_type::q5_0, {"q5_0", qk5_0, sizeof(block_q5_0)}},
    {ggml_type::q5_1, {"q5_1", qk5_1, sizeof(block_q5_1)}},
    {ggml_type::q8_0, {"q8_0", qk8_0, sizeof(block_q8_0)}},
    {ggml_type::q4_k, {"q4_k", qk_k, sizeof(block_q4_k)}},
    {ggml_type::q5_k, {"q5_k", qk_k, sizeof(block_q5_k)}},
    {ggml_type::q6_k, {"q6_k", qk_k, sizeof(block_q6_k)}},
    {ggml_type::q8_k, {"q8_k", qk_k, sizeof(block_q8_k)}},
    {ggml_type::bf16, {"bf16", 1, 2}},
};

}  // namespace

std::optional<type_traits> traits_of(uint32_t type_id) {
  for (const auto& e : k_types)
    if (static_cast<uint32_t>(e.type) == type_id) return e.tr;
  return std::nullopt;
}

const type_traits& traits(ggml_type t) {
  for (const auto& e : k_types)
    if (e.type == t) return e.tr;
  static const type_traits invalid{"invalid", 1, 0};
  return invalid;
}

std::optional<size_t> row_size(ggml_type t, int64_t n) {
  auto tr = traits_of(static_cast<uint32_t>(t));
  if (!tr || n < 0 || n % tr->block_size != 0) return std::nullopt;
  uint64_t blocks = static_cast<uint64_t>(n / tr->block_size);
  if (blocks != 0 && tr->type_size > std::numeric_limits<size_t>::max() / blocks) return std::nullopt;
  return static_cast<size_t>(blocks * tr->type_size);
}

std::string_view supported_type_names() {
  return "f32, f16, bf16, q8_0, q4_0, q4_1, q5_0, q5_1, q4_k, q5_k, q6_k";
}

float fp16_to_f32(fp16_t h) {
  uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1fu;
  uint32_t mant = h & 0x3ffu;
  uint32_t bits;
  if (exp == 0x1f) {
    bits = sign | 0x7f800000u | (mant << 13);  // inf / NaN (payload kept)
  } else if (exp != 0) {
    bits = sign | ((exp + 112) << 23) | (mant << 13);
  } else if (mant == 0) {
    bits = sign;
  } else {
    // Subnormal: value = mant * 2^-24, exactly representable as a float.
    float v = static_cast<float>(mant) * 0x1p-24f;
    return sign ? -v : v;
  }
  return std::bit_cast<float>(bits);
}

fp16_t f32_to_fp16(float f) {
  uint32_t x = std::bit_cast<uint32_t>(f);
  uint16_t sign = static_cast<uint16_t>((x >> 16) & 0x8000u);
  uint32_t ax = x & 0x7fffffffu;
  if (ax >= 0x7f800000u) {  // inf or NaN (NaN stays a quiet NaN)
    if (ax == 0x7f800000u) return sign | 0x7c00u;
    return static_cast<fp16_t>(sign | 0x7e00u | ((ax >> 13) & 0x3ffu));
  }
  if (ax >= 0x477ff000u) return sign | 0x7c00u;  // >= 65520 rounds to infinity
  if (ax < 0x38800000u) {                        // below 2^-14: fp16 subnormal or zero
    float r = std::bit_cast<float>(ax) * 0x1p24f;  // exact: a power-of-two scale of a small value
    auto n = static_cast<uint32_t>(std::nearbyint(r));  // round to nearest even
    return static_cast<fp16_t>(sign | n);
  }
  uint32_t rounded = ax + 0xfffu + ((ax >> 13) & 1u);
  return static_cast<fp16_t>(sign | ((rounded >> 13) - (112u << 10)));
}

float bf16_to_f32(bf16_t h) { return std::bit_cast<float>(static_cast<uint32_t>(h) << 16); }

bf16_t f32_to_bf16(float f) {
  uint32_t x = std::bit_cast<uint32_t>(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<bf16_t>((x >> 16) | 0x40u);  // quiet NaN
  return static_cast<bf16_t>((x + 0x7fffu + ((x >> 16) & 1u)) >> 16);
}

}  // namespace qf::infer
