// The on-disk cache of extracted definitions, so that a restart does not
// parse files whose content it has seen.
//
// One file per set of workspace roots, `workspace-<hash of the salt and the
// roots>.qfidx` under $XDG_CACHE_HOME/quickfill (else ~/.cache/quickfill); the
// salt is the install's (install_salt.h), so the name does not reveal which
// folders were indexed. Entries are keyed
// by a 64-bit FNV-1a hash of a file's content seeded with the extractor
// version and the grammar name, so an entry is valid for any file with those
// bytes, wherever it lives, and a new extractor never reads an old entry.
//
// Format (little-endian): "QFDC", u32 format version, u32 extractor version,
// u64 entry count, the entries, then u64 FNV-1a of everything before it.
// Entry: u64 key, u32 definition count, definitions (str name, u8 kind, u32
// line, str signature, str doc, str container), u32 import count, imports
// (str module, u32 line, u32 name count, str names); str = u32 length + bytes.
// Written to a temporary file with a unique name (process id and random
// bytes) in the same folder, mode 0600, and renamed over the old one (atomic;
// two processes never share a temporary file). Read and written as a private
// file (private_file.h): a symbolic link, a FIFO or another user's file at
// the path is refused, never followed. A file that fails any check (size,
// magic, versions, bounds, checksum) is ignored as a whole, with a log line.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "indexing/definition_extract.h"

namespace qf::index {

struct syntax_language;

using cache_entries = std::unordered_map<std::uint64_t, file_definitions>;

// $XDG_CACHE_HOME/quickfill, else $HOME/.cache/quickfill, else "".
std::string default_cache_dir();
// The cache file for a set of roots inside `dir`.
std::string cache_file_for(const std::string& dir, const std::vector<std::string>& roots);
// The key of a file's content for a grammar.
std::uint64_t content_key(std::string_view content, std::string_view language_name);

// Empty when the file is absent or unusable (`*error` says why when it is unusable).
cache_entries load_definition_cache(const std::string& path, std::string* error);
// Atomic write; false with *error on failure.
bool save_definition_cache(const std::string& path, const cache_entries& entries, std::string* error);

}  // namespace qf::index
