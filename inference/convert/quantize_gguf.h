// Quantizing a GGUF model file to another GGUF file, with llama.cpp's choice of
// type per tensor so that files and figures compare with its quantizer.
//
// Schemes: q8_0, q4_0, q4_k, q6_k (one type for the matrices) and q4_k_m (the
// Q4_K_M mix: Q4_K, with attn_v and ffn_down in Q6_K on the layers where
// llama.cpp's use_more_bits() holds: the first and last eighth and every
// third layer between). In every scheme but q8_0 the classifier
// (output.weight, or token_embd.weight when the embeddings are tied) is Q6_K.
// 1-D tensors (norms, biases) and tensors already quantized are copied as they
// are. A matrix whose rows do not fit the chosen type's blocks falls back:
// Q4_K -> Q4_0 (llama.cpp uses Q5_0, which this engine does not implement),
// Q6_K -> Q8_0, then F16. Metadata is copied; general.file_type and
// general.quantization_version are set.
#pragma once

#include <optional>
#include <string>

#include "inference/core/ggml_types.h"

namespace qf::infer::convert {

enum class quant_scheme { q8_0, q4_0, q4_k, q6_k, q4_k_m };

std::optional<quant_scheme> quant_scheme_from_name(const std::string& name);  // "q8_0", ...
// The type a tensor gets; `layer` is its block index (-1 if none).
ggml_type quant_type_for(quant_scheme s, const std::string& name, ggml_type source, int64_t cols, int64_t layer,
                         int64_t n_layer, bool tied);
// Reads in_path, writes out_path; throws (gguf::gguf_error, std::runtime_error) on failure.
// Returns a one-line summary ("290 tensors: 169 q8_0, 121 f32; 942.4 MiB -> 500.9 MiB").
std::string quantize_gguf(const std::string& in_path, const std::string& out_path, quant_scheme s);

}  // namespace qf::infer::convert
