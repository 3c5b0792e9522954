// Quantizing a GGUF file for the gguf subcommands (`quantize`, and `synth`
// for quantized output types).
#pragma once

#include <optional>
#include <string>

#include "inference/core/ggml_types.h"

namespace qf::cli {

// q8_0, q4_0, q4_1, q5_0, q5_1, q4_k, q6_k -> that type; nullopt otherwise (q4_k_m is a mix, not a type).
std::optional<infer::ggml_type> quantize_type_from_name(const std::string& name);
// Quantizes in_path to out_path as `type_name` (q8_0|q4_0|q4_1|q5_0|q5_1|q4_k|q6_k|q4_k_m)
// with inference/convert/quantize_model.h; prints a summary or the error to
// stderr and returns an exit code. n_threads <= 0: all cores.
int quantize_file(const std::string& in_path, const std::string& out_path, const std::string& type_name,
                  int n_threads = 0);

}  // namespace qf::cli
