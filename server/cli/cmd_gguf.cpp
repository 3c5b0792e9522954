// `quickfill gguf SUBCOMMAND ...`: convert, synthesize, quantize and inspect
// GGUF files. Dispatches to gguf_*.cpp.
#include "server/cli/cli_args.h"
#include "server/cli/commands.h"
#include "server/cli/gguf_commands.h"

namespace qf::cli {

int cmd_gguf(std::span<char*> args) {
  static const char* usage =
      "usage: quickfill gguf SUBCOMMAND ...\n"
      "  from-llama2c CHECKPOINT TOKENIZER -o OUT.gguf [--type f32|f16]\n"
      "      convert a llama2.c checkpoint and tokenizer.bin to a GGUF llama model\n"
      "  synth --preset qwen2.5-coder-0.5b|qwen2.5-coder-1.5b|tiny [--arch llama|qwen2] -o OUT.gguf ...\n"
      "      write a model with random weights and exact shapes\n"
      "  quantize IN.gguf OUT.gguf q8_0|q4_0|q4_k|q6_k|q4_k_m\n"
      "      quantize an F32/F16 model\n"
      "  info FILE\n"
      "      print metadata and a tensor summary\n"
      "Each subcommand takes --help.\n";
  static constexpr subcommand subcommands[] = {
      {"from-llama2c", gguf_from_llama2c}, {"synth", gguf_synth}, {"quantize", gguf_quantize}, {"info", gguf_info}};
  return run_subcommand(args, "quickfill gguf", usage, subcommands);
}

}  // namespace qf::cli
