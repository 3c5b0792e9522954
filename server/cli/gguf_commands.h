// The `quickfill gguf ...` subcommands, one file each (gguf_*.cpp); cmd_gguf.cpp
// dispatches. Each takes the arguments from its own name on and returns a
// process exit code.
#pragma once

#include <span>

namespace qf::cli {

int gguf_from_llama2c(std::span<char*> args);  // gguf_from_llama2c.cpp
int gguf_synth(std::span<char*> args);         // gguf_synth.cpp
int gguf_quantize(std::span<char*> args);      // gguf_quantize.cpp
int gguf_info(std::span<char*> args);          // gguf_info.cpp

}  // namespace qf::cli
