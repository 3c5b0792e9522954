// `quickfill gguf quantize IN.gguf OUT.gguf TYPE`.
#include <cstdio>

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
  // The model quantizer (inference/gguf/quantize_model.h) is not part of this build yet.
  std::fprintf(stderr, "quickfill gguf quantize: quantization is not available in this build\n");
  return 2;
}

int gguf_quantize(std::span<char*> args) {
  std::string in, out, type;
  arg_parser p("quickfill gguf quantize", "Quantizes an F32/F16 GGUF model.");
  p.add_positional("IN.gguf", &in, "input model (F32/F16/BF16 matrices)");
  p.add_positional("OUT.gguf", &out, "output path");
  p.add_positional("TYPE", &type, "q8_0 | q4_0 | q4_k | q6_k | q4_k_m");
  if (!p.parse(args)) return p.exit_code();
  return quantize_file(in, out, type);
}

}  // namespace qf::cli
