// Placeholder until the perplexity subcommand is implemented.
#include <cstdio>

#include "server/cli/commands.h"

namespace qf::cli {
int cmd_perplexity(std::span<char*>) {
  std::fprintf(stderr, "quickfill: the 'perplexity' command is not implemented yet\n");
  return 2;
}
}  // namespace qf::cli
