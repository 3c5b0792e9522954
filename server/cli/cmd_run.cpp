// Placeholder until the run subcommand is implemented.
#include <cstdio>

#include "server/cli/commands.h"

namespace qf::cli {
int cmd_run(std::span<char*>) {
  std::fprintf(stderr, "quickfill: the 'run' command is not implemented yet\n");
  return 2;
}
}  // namespace qf::cli
