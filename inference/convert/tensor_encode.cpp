// Float32 -> GGUF tensor bytes (see tensor_encode.h).
#include "inference/convert/tensor_encode.h"

#include <cstring>
#include <stdexcept>
#include <string>

namespace qf::infer::convert {

std::vector<uint8_t> encode_rows(ggml_type type, std::span<const float> data, int64_t rows, int64_t cols) {
  if (static_cast<int64_t>(data.size()) != rows * cols)
    throw std::invalid_argument("encode_rows: data size does not match rows * cols");
  auto rs = row_size(type, cols);
  if (!rs)
    throw std::invalid_argument("a row of " + std::to_string(cols) + " elements cannot be stored as " +
                                std::string(traits(type).name) + " (block size " +
                                std::to_string(traits(type).block_size) + ")");
  std::vector<uint8_t> out(*rs * static_cast<size_t>(rows));
  switch (type) {
    case ggml_type::f32:
      std::memcpy(out.data(), data.data(), data.size() * sizeof(float));
      break;
    case ggml_type::f16: {
      auto* dst = reinterpret_cast<fp16_t*>(out.data());
      for (size_t i = 0; i < data.size(); ++i) dst[i] = f32_to_fp16(data[i]);
      break;
    }
    case ggml_type::bf16: {
      auto* dst = reinterpret_cast<bf16_t*>(out.data());
      for (size_t i = 0; i < data.size(); ++i) dst[i] = f32_to_bf16(data[i]);
      break;
    }
    default:
      throw std::invalid_argument("encode_rows writes f32, f16 or bf16; quantized types go through the quantizer");
  }
  return out;
}

}  // namespace qf::infer::convert
