// The install salt: random bytes mixed into every hash of a path or URI that
// quickfill writes where others may read it (the workspace cache's file
// name, the audit log's document field), so that the hash of a known path
// cannot be computed and looked for.
//
// 32 random bytes as 64 hex digits in `<cache dir>/salt` (the cache dir is
// $XDG_CACHE_HOME/quickfill, else ~/.cache/quickfill), created 0600 on first
// use and read as a private file afterwards (private_file.h). It is created
// as a whole (written to a temporary file, then hard-linked into place), so
// two processes starting at once agree on one salt. Deleting it changes the
// cache file names (the old cache is rebuilt) and the audit log's hashes.
#pragma once

#include <string>

namespace qf::index {

// The salt stored in `dir` (created with the folder when absent); "" with
// *error when it cannot be read or stored.
std::string install_salt(const std::string& dir, std::string* error);

// The salt of default_cache_dir(), read once per process. When it cannot be
// stored, a random salt for this process alone (logged once): hashes then
// differ between runs, and nothing else breaks.
const std::string& default_install_salt();

}  // namespace qf::index
