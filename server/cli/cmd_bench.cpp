// Placeholder until the bench subcommand is implemented.
#include <cstdio>

#include "server/cli/commands.h"

namespace qf::cli {
int cmd_bench(std::span<char*>) {
  std::fprintf(stderr, "quickfill: the 'bench' command is not implemented yet\n");
  return 2;
}
}  // namespace qf::cli
