// Quantizing a whole GGUF model (F32/F16/BF16 matrices) with one of the
// llama.cpp-style recipes:
//   q8_0, q4_0, q4_1, q5_0, q5_1, q6_k
//                     every matrix in that type
//   q4_k              Q4_K matrices (llama.cpp's Q4_K_S file type)
//   q4_k_m            Q4_K, with Q6_K for attn_v.weight and ffn_down.weight in
//                     the "more bits" layers (first and last eighth, every
//                     third in between)
// In every 4-bit recipe the classifier (output.weight, or token_embd.weight
// when the embeddings are tied) is Q6_K, as llama.cpp does. 1-D tensors
// (norms, biases) are stored as F32; tensors already quantized are copied. A
// matrix whose row length is not a multiple of 256 gets llama.cpp's
// substitute for a K-quant (Q4_K -> Q5_0, Q6_K -> Q8_0); one that still does
// not fit the blocks falls back to Q8_0, then F16. Metadata is copied; general.file_type (llama.cpp's LLAMA_FTYPE
// number) and general.quantization_version are set.
//
// It lives in convert/ (the tools that produce GGUF files), above both gguf/
// and backend/, because it runs the CPU kernels' dequantizers, quantizers and
// thread pool; gguf/ itself stays a file format below the backends. The API
// keeps the gguf namespace it had.
#pragma once

#include <string>
#include <string_view>

#include "inference/core/ggml_types.h"

namespace qf::infer::gguf {

// Throws gguf_error on a bad recipe, an unreadable/malformed input, an output
// that is the input (same path, hard or symbolic link) or a write failure. The
// output is written to a temporary file and renamed over out_path at the end.
void quantize_model(const std::string& in_path, const std::string& out_path, std::string_view recipe, int n_threads);

// The type quantize_model gives one tensor (exposed for tests and tools).
// `layer` is the block index parsed from "blk.N." (-1 if none).
ggml_type quantized_type_for(std::string_view recipe, std::string_view name, ggml_type source, int n_dims,
                             int64_t cols, int64_t layer, int64_t n_layer, bool tied_embeddings);

// llama.cpp's LLAMA_FTYPE number for a recipe.
int file_type_for(std::string_view recipe);

}  // namespace qf::infer::gguf
