// Walking a workspace for source files to index.
//
// From each root, depth first with an explicit stack (no recursion): skips
// .git and the usual dependency/build/cache folders (node_modules, build,
// vendor, target, dist, __pycache__, .venv, ...), whatever .gitignore files
// (nested ones too) and .git/info/exclude ignore, symbolic links that lead
// out of every root (to a file or folder elsewhere: a repository cannot make
// the index read ~/.ssh), symlinks that lead back into a directory already
// walked (loops), files over the size cap and files whose
// language has no grammar in this build. Stops after `max_files` files (the
// result says it was truncated). Reading a file (read_source_file) refuses
// binary content (a NUL byte in the first 8 KiB) and files over the cap; a
// file that vanished between the walk and the read is just unreadable.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace qf::index {

struct walk_options {
  std::size_t max_files = 100000;              // stop there (logged)
  std::uint64_t max_file_bytes = 1u << 20;     // larger files are skipped
};

struct walked_file {
  std::string path;  // absolute
  std::uint64_t size = 0;
};

struct walk_result {
  std::vector<walked_file> files;
  std::size_t ignored = 0;        // by .gitignore / exclude or a skipped folder
  std::size_t too_large = 0;
  std::size_t no_grammar = 0;
  std::size_t loops = 0;          // symlinked directories already walked
  std::size_t outside = 0;        // symbolic links that lead out of every root (skipped)
  bool truncated = false;         // max_files reached
};

// `cancel` (may be null) stops the walk early.
walk_result walk_workspace(const std::vector<std::string>& roots, const walk_options& opts,
                           const std::atomic<bool>* cancel = nullptr);

// Folder names never walked into.
bool is_skipped_directory(std::string_view name);

// Whether a single path (a file-change event) would be indexed by a walk of
// `roots`: under a root (through links too, when it exists), not in a
// skipped folder, not ignored, with a grammar.
bool is_indexable_path(const std::vector<std::string>& roots, const std::string& path);

enum class read_status { ok, unreadable, too_large, binary };
const char* read_status_name(read_status s);
// `reject_binary`: refuse content with a NUL byte in its first 8 KiB.
read_status read_source_file(const std::string& path, std::uint64_t max_bytes, std::string* out,
                             bool reject_binary = true);

}  // namespace qf::index
