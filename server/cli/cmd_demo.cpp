// Placeholder until the demo subcommand is implemented.
#include <cstdio>

#include "server/cli/commands.h"

namespace qf::cli {
int cmd_demo(std::span<char*>) {
  std::fprintf(stderr, "quickfill: the 'demo' command is not implemented yet\n");
  return 2;
}
}  // namespace qf::cli
