// The API key of a remote completion source, and keeping it out of messages.
//
// The key never lives in the settings JSON: the settings name an environment
// variable (apiKeyEnv) or a file (apiKeyFile, e.g. one a secrets manager
// writes), and load_api_key() reads it from there when the source is made.
// A file is read whole with its trailing line end and spaces dropped; an
// empty key, an unset variable or an unreadable file is an error that names
// the variable or the file, never any of its content.
//
// Messages that may carry text from elsewhere (a server's error body that
// echoes the request headers, an exception from a library) go through
// scrub() before they are logged or thrown: every occurrence of the key
// becomes "[redacted]".
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace qf::remote {

struct api_key_source {
  std::string env;   // apiKeyEnv: the variable's name ("" none)
  std::string file;  // apiKeyFile: a path ("" none)
  bool any() const { return !env.empty() || !file.empty(); }
};

// The key (nullopt with *error when it cannot be had). Without a source: an
// empty string (no Authorization header is sent).
std::optional<std::string> load_api_key(const api_key_source& src, std::string* error);

// `text` with every occurrence of `key` replaced; keys shorter than 4 bytes
// are not scrubbed (they would match ordinary text; load_api_key refuses them).
std::string scrub(std::string_view text, std::string_view key);

}  // namespace qf::remote
