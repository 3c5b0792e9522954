// `quickfill gguf SUBCOMMAND ...`: convert, synthesize, quantize and inspect
// GGUF files. Dispatches to gguf_*.cpp.
#include <cstdio>
#include <cstring>
#include <string_view>

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
  if (args.size() < 2 || std::strcmp(args[1], "-h") == 0 || std::strcmp(args[1], "--help") == 0) {
    std::fputs(usage, args.size() < 2 ? stderr : stdout);
    return args.size() < 2 ? 2 : 0;
  }
  auto sub = args.subspan(1);
  std::string_view name = sub[0];
  if (name == "from-llama2c") return gguf_from_llama2c(sub);
  if (name == "synth") return gguf_synth(sub);
  if (name == "quantize") return gguf_quantize(sub);
  if (name == "info") return gguf_info(sub);
  std::fprintf(stderr, "quickfill gguf: unknown subcommand '%s'\n%s", sub[0], usage);
  return 2;
}

}  // namespace qf::cli
