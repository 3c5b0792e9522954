// The `quickfill gguf ...` subcommands, one file each (gguf_*.cpp); cmd_gguf.cpp
// dispatches. Each takes the arguments from its own name on and returns a
// process exit code.
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <string_view>

namespace qf::cli {

int gguf_from_llama2c(std::span<char*> args);  // gguf_from_llama2c.cpp
int gguf_synth(std::span<char*> args);         // gguf_synth.cpp
int gguf_quantize(std::span<char*> args);      // gguf_quantize.cpp
int gguf_info(std::span<char*> args);          // gguf_info.cpp

// Text from a file made safe to print (gguf_info.cpp): well-formed printable
// UTF-8 stays; backslash, C0/C1 controls, DEL, bidirectional controls and line
// separators become escapes (\n, \x1b, \u{202e}), invalid UTF-8 bytes \xNN;
// '"' too when escape_quote. At most max_chars code points, then "...".
std::string printable(std::string_view s, size_t max_chars = SIZE_MAX, bool escape_quote = false);

}  // namespace qf::cli
