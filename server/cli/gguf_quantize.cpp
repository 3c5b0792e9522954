// `quickfill gguf quantize IN.gguf OUT.gguf TYPE [-t THREADS]`: runs the
// model quantizer (inference/convert/quantize_model.h) and prints a summary of the
// tensor types it wrote.
#include <cstdio>
#include <exception>

#include <map>

#include "inference/gguf/gguf.h"
#include "inference/convert/quantize_model.h"
#include "server/cli/cli_args.h"
#include "server/cli/gguf_commands.h"
#include "server/cli/gguf_quantize.h"

namespace qf::cli {

std::optional<infer::ggml_type> quantize_type_from_name(const std::string& name) {
  if (name == "q8_0") return infer::ggml_type::q8_0;
  if (name == "q4_0") return infer::ggml_type::q4_0;
  if (name == "q4_1") return infer::ggml_type::q4_1;
  if (name == "q5_0") return infer::ggml_type::q5_0;
  if (name == "q5_1") return infer::ggml_type::q5_1;
  if (name == "q4_k") return infer::ggml_type::q4_k;
  if (name == "q6_k") return infer::ggml_type::q6_k;
  return std::nullopt;
}

int quantize_file(const std::string& in_path, const std::string& out_path, const std::string& type_name,
                  int n_threads) {
  if (type_name != "q4_k_m" && !quantize_type_from_name(type_name)) {
    std::fprintf(stderr, "quickfill gguf quantize: unknown type '%s' (q8_0, q4_0, q4_1, q5_0, q5_1, q4_k, q6_k, q4_k_m)\n",
                 type_name.c_str());
    return 2;
  }
  try {
    infer::gguf::quantize_model(in_path, out_path, type_name, n_threads);
    auto f = infer::gguf::file::open(out_path, infer::gguf::data_storage::mapped);  // for the summary only
    std::map<std::string, int> count;
    size_t bytes = 0;
    for (const auto& t : f->tensors()) {
      count[std::string(infer::traits(t.type).name)]++;
      bytes += t.n_bytes;
    }
    std::string summary;
    for (const auto& [name, n] : count) summary += (summary.empty() ? "" : ", ") + std::to_string(n) + " " + name;
    std::fprintf(stderr, "%s: %zu tensors (%s), %.1f MiB\n", printable(out_path).c_str(), f->tensors().size(),
                 summary.c_str(),
                 static_cast<double>(bytes) / 1048576.0);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "quickfill gguf quantize: %s\n", printable(e.what()).c_str());
    return 1;
  }
  return 0;
}

int gguf_quantize(std::span<char*> args) {
  std::string in, out, type;
  arg_parser p("quickfill gguf quantize",
               "Quantizes an F32/F16/BF16 GGUF model with llama.cpp's per-tensor type choice\n"
               "(q4_k_m is the Q4_K/Q6_K mix; rows not a multiple of 256 get Q5_0/Q8_0 in the K-quant\n"
               "recipes, as llama.cpp does; see docs/quantization.md).");
  p.add_positional("IN.gguf", &in, "input model");
  p.add_positional("OUT.gguf", &out, "output path");
  p.add_positional("TYPE", &type, "q8_0 | q4_0 | q4_1 | q5_0 | q5_1 | q4_k | q6_k | q4_k_m");
  int n_threads = 0;
  p.add_int({"-t", "--threads"}, &n_threads, "threads (default: all cores)");
  if (!p.parse(args)) return p.exit_code();
  return quantize_file(in, out, type, n_threads);
}

}  // namespace qf::cli
