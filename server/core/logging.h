// spdlog set-up for the server: logs go to stderr or to a file, never to
// stdout (which carries only LSP messages).
#pragma once

#include <string>

namespace qf::server {

// level: trace, debug, info, warn, error, off. Returns false with *error on a
// bad level or an unwritable file.
bool setup_logging(const std::string& level, const std::string& file, std::string* error);

}  // namespace qf::server
