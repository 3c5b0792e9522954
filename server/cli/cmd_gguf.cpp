// Placeholder until the gguf subcommand is implemented.
#include <cstdio>

#include "server/cli/commands.h"

namespace qf::cli {
int cmd_gguf(std::span<char*>) {
  std::fprintf(stderr, "quickfill: the 'gguf' command is not implemented yet\n");
  return 2;
}
}  // namespace qf::cli
