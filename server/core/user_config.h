// The user config file, $XDG_CONFIG_HOME/quickfill/config.json: the only
// place for privileged settings (docs/security.md). The editor's settings may
// come from a cloned repository; this file comes from the user.
//
// It is used only when it is a regular file (lstat: not a symbolic link),
// owned by this process's user and not writable by group or others; the
// checks are made again on the opened descriptor (O_NOFOLLOW), so a file
// swapped in between is refused too. Its content has the shape of a settings
// payload and is layered under the editor's by parse_layered_settings().
#pragma once

#include <string>

#include <boost/json/value.hpp>

namespace qf::server {

// $XDG_CONFIG_HOME/quickfill/config.json ($HOME/.config when XDG_CONFIG_HOME
// is unset or empty); "" when neither variable is set.
std::string default_user_config_path();

struct user_config {
  boost::json::value payload;  // the parsed file; null when missing or refused
  std::string refused;         // why the file is not used ("" when it is, or is missing)
};

// Reads `path` ("" or a missing file: null payload, nothing refused).
user_config read_user_config(const std::string& path);

}  // namespace qf::server
