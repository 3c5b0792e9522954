// `quickfill gguf quantize IN.gguf OUT.gguf TYPE`: runs the model quantizer
// (inference/convert/quantize_gguf.h) and prints what it wrote.
#include <cstdio>
#include <exception>

#include "inference/convert/quantize_gguf.h"
#include "server/cli/cli_args.h"
#include "server/cli/gguf_commands.h"
#include "server/cli/gguf_quantize.h"

namespace qf::cli {

std::optional<infer::ggml_type> quantize_type_from_name(const std::string& name) {
  if (name == "q8_0") return infer::ggml_type::q8_0;
  if (name == "q4_0") return infer::ggml_type::q4_0;
  if (name == "q4_k") return infer::ggml_type::q4_k;
  if (name == "q6_k") return infer::ggml_type::q6_k;
  return std::nullopt;
}

int quantize_file(const std::string& in_path, const std::string& out_path, const std::string& type_name) {
  auto scheme = infer::convert::quant_scheme_from_name(type_name);
  if (!scheme) {
    std::fprintf(stderr, "quickfill gguf quantize: unknown type '%s' (q8_0, q4_0, q4_k, q6_k, q4_k_m)\n",
                 type_name.c_str());
    return 2;
  }
  try {
    std::string summary = infer::convert::quantize_gguf(in_path, out_path, *scheme);
    std::fprintf(stderr, "%s: %s\n", out_path.c_str(), summary.c_str());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "quickfill gguf quantize: %s\n", e.what());
    return 1;
  }
  return 0;
}

int gguf_quantize(std::span<char*> args) {
  std::string in, out, type;
  arg_parser p("quickfill gguf quantize",
               "Quantizes an F32/F16/BF16 GGUF model (llama.cpp's per-tensor type choice;\n"
               "q4_k_m is the Q4_K/Q6_K mix).");
  p.add_positional("IN.gguf", &in, "input model");
  p.add_positional("OUT.gguf", &out, "output path");
  p.add_positional("TYPE", &type, "q8_0 | q4_0 | q4_k | q6_k | q4_k_m");
  if (!p.parse(args)) return p.exit_code();
  return quantize_file(in, out, type);
}

}  // namespace qf::cli
