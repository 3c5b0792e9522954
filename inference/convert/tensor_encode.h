// Encoding float32 weights into the byte layout of a GGUF tensor type, for the
// converters and the synthetic model writer: F32, F16 and BF16. Quantized
// types are produced afterwards by the model quantizer from such a file.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "inference/core/ggml_types.h"

namespace qf::infer::convert {

// Encodes `rows` rows of `cols` floats as `type` (f32, f16 or bf16). Throws
// std::invalid_argument for any other type.
std::vector<uint8_t> encode_rows(ggml_type type, std::span<const float> data, int64_t rows, int64_t cols);

// The type a converter stores a tensor in when asked for `wanted`: 1-D tensors
// (norm weights, biases) stay F32, as llama.cpp's converters do.
inline ggml_type storage_type(ggml_type wanted, bool is_vector) { return is_vector ? ggml_type::f32 : wanted; }

}  // namespace qf::infer::convert
