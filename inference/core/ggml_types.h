// Tensor element types and quantization block layouts.
//
// The numeric ids and the byte layout of every block are those of the GGUF
// format as written by llama.cpp/ggml, so that files users already have load
// unchanged. Every block is a plain struct with no padding; static_asserts pin
// the sizes. Weights are stored row-major: a row of n elements of type T is
// n / block_size(T) consecutive blocks.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace qf::infer {

// Values are the GGUF/ggml type ids. Only the listed ones are supported.
enum class ggml_type : uint32_t {
  f32 = 0,
  f16 = 1,
  q4_0 = 2,
  q4_1 = 3,
  q5_0 = 6,
  q5_1 = 7,
  q8_0 = 8,
  q4_k = 12,
  q5_k = 13,
  q6_k = 14,
  q8_k = 15,  // activation-only type used by k-quant dot products
  bf16 = 30,
};

using fp16_t = uint16_t;  // IEEE binary16 bits
using bf16_t = uint16_t;  // bfloat16 bits

inline constexpr int qk4_0 = 32;
inline constexpr int qk4_1 = 32;
inline constexpr int qk5_0 = 32;
inline constexpr int qk5_1 = 32;
inline constexpr int qk8_0 = 32;
inline constexpr int qk_k = 256;
inline constexpr int k_scale_size = 12;

struct block_q4_0 {
  fp16_t d;               // scale
  uint8_t qs[qk4_0 / 2];  // nibbles: low nibble = element j, high = element j+16
};
static_assert(sizeof(block_q4_0) == 18);

// value = q * d + m, q in 0..15 (nibbles as in Q4_0).
struct block_q4_1 {
  fp16_t d;               // scale
  fp16_t m;               // min (offset)
  uint8_t qs[qk4_1 / 2];  // nibbles: low nibble = element j, high = element j+16
};
static_assert(sizeof(block_q4_1) == 20);

// value = (q - 16) * d, q in 0..31: low 4 bits as in Q4_0, the 5th bit of
// element j is bit j of qh read as a little-endian uint32.
struct block_q5_0 {
  fp16_t d;               // scale
  uint8_t qh[4];          // 5th bits
  uint8_t qs[qk5_0 / 2];  // low nibbles: element j, high nibbles: element j+16
};
static_assert(sizeof(block_q5_0) == 22);

// value = q * d + m, q in 0..31 (bits as in Q5_0).
struct block_q5_1 {
  fp16_t d;               // scale
  fp16_t m;               // min (offset)
  uint8_t qh[4];          // 5th bits
  uint8_t qs[qk5_1 / 2];  // low 4 bits
};
static_assert(sizeof(block_q5_1) == 24);

struct block_q8_0 {
  fp16_t d;          // scale
  int8_t qs[qk8_0];  // quants
};
static_assert(sizeof(block_q8_0) == 34);

// 8 sub-blocks of 32; 6-bit scales and mins packed in `scales`.
struct block_q4_k {
  fp16_t d;                      // super-block scale for quantized scales
  fp16_t dmin;                   // super-block scale for quantized mins
  uint8_t scales[k_scale_size];  // scales and mins, 6 bits each
  uint8_t qs[qk_k / 2];          // 4-bit quants
};
static_assert(sizeof(block_q4_k) == 144);

struct block_q5_k {
  fp16_t d;
  fp16_t dmin;
  uint8_t scales[k_scale_size];
  uint8_t qh[qk_k / 8];  // high bit of each quant
  uint8_t qs[qk_k / 2];  // low 4 bits
};
static_assert(sizeof(block_q5_k) == 176);

// 16 sub-blocks of 16; 8-bit scales.
struct block_q6_k {
  uint8_t ql[qk_k / 2];      // low 4 bits
  uint8_t qh[qk_k / 4];      // high 2 bits
  int8_t scales[qk_k / 16];  // scales
  fp16_t d;                  // super-block scale
};
static_assert(sizeof(block_q6_k) == 210);

struct block_q8_k {
  float d;
  int8_t qs[qk_k];
  int16_t bsums[qk_k / 16];  // sum of quants in groups of 16
};
static_assert(sizeof(block_q8_k) == 292);

struct type_traits {
  std::string_view name;
  int64_t block_size;  // elements per block
  size_t type_size;    // bytes per block
};

// Traits of a supported type, or nullopt for an id this engine does not know.
std::optional<type_traits> traits_of(uint32_t type_id);
const type_traits& traits(ggml_type t);  // t must be supported

// Bytes of one row of n elements; nullopt if n is not a multiple of the
// block size or the size overflows.
std::optional<size_t> row_size(ggml_type t, int64_t n);

// Comma-separated list of supported type names, for error messages.
std::string_view supported_type_names();

// Scalar IEEE conversions (round-to-nearest-even), exact for all inputs.
float fp16_to_f32(fp16_t h);
fp16_t f32_to_fp16(float f);
float bf16_to_f32(bf16_t h);
bf16_t f32_to_bf16(float f);

}  // namespace qf::infer
