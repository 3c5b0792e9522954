// `quickfill gguf from-llama2c CHECKPOINT TOKENIZER -o OUT.gguf [--type f32|f16]`.
#include <cstdio>
#include <exception>

#include "inference/convert/llama2c.h"
#include "server/cli/cli_args.h"
#include "server/cli/gguf_commands.h"

namespace qf::cli {

int gguf_from_llama2c(std::span<char*> args) {
  std::string checkpoint, tokenizer, out, type = "f32", name;
  arg_parser p("quickfill gguf from-llama2c",
               "Converts a llama2.c legacy checkpoint and its tokenizer.bin to a GGUF llama model.");
  p.add_positional("CHECKPOINT", &checkpoint, "llama2.c checkpoint (.bin)");
  p.add_positional("TOKENIZER", &tokenizer, "llama2.c tokenizer (tokenizer.bin / tok512.bin)");
  p.add_string({"-o", "--output"}, &out, "output GGUF path (required)");
  p.add_string({"--type"}, &type, "f32 (default) or f16 for the matrices; norms stay f32");
  p.add_string({"--name"}, &name, "general.name (default: the checkpoint's file name)");
  if (!p.parse(args)) return p.exit_code();
  if (out.empty()) {
    std::fprintf(stderr, "quickfill gguf from-llama2c: -o OUT.gguf is required\n");
    return 2;
  }
  if (type != "f32" && type != "f16") {
    std::fprintf(stderr, "quickfill gguf from-llama2c: --type must be f32 or f16 (quantize afterwards)\n");
    return 2;
  }
  try {
    infer::convert::convert_llama2c(checkpoint, tokenizer, out,
                                    type == "f16" ? infer::ggml_type::f16 : infer::ggml_type::f32, name);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "quickfill gguf from-llama2c: %s\n", printable(e.what()).c_str());
    return 1;
  }
  std::fprintf(stderr, "wrote %s\n", out.c_str());
  return 0;
}

}  // namespace qf::cli
