// Temporary entry point; replaced by the LSP server's main.
#include <cstring>
#include <span>

#include "server/cli/commands.h"

int main(int argc, char** argv) {
  std::span<char*> args(argv + 1, argc > 1 ? argc - 1 : 0);
  if (!args.empty() && std::strcmp(args[0], "gguf") == 0) return qf::cli::cmd_gguf(args);
  if (!args.empty() && std::strcmp(args[0], "run") == 0) return qf::cli::cmd_run(args);
  return 2;
}
