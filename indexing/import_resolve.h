// Best-effort resolution of an import to the file it names, per language.
//
//   python   dotted modules: relative ones (`.x`, `..pkg.y`) from the file's
//            package, absolute ones from each root, the root's src/ and the
//            file's ancestor folders; `<p>.py`, then `<p>/__init__.py`
//            (`from . import x` tries the module x first)
//   js / ts  relative paths: as written, then with .ts .tsx .d.ts .js .jsx
//            .mjs .cjs, then <p>/index.*; a written .js also tries .ts/.tsx
//   c / cpp  includes relative to the file's folder, then each root and its
//            include/ and src/ folders; else any indexed file with that path suffix
//   go       the module path from the nearest go.mod; the package folder's
//            first non-test .go file (by name)
//   rust     `mod x;` as x.rs or x/mod.rs beside the file (or in its own
//            folder for lib.rs, main.rs and mod.rs); crate::/self::/super::
//            paths as the longest prefix that names a module file
//   java     a.b.C as a/b/C.java under each root (and src/main/java, src),
//            else any indexed file ending in a/b/C.java
// `exists(path)` says whether a file is there (the index's files or the disk).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "indexing/definitions.h"

namespace qf::index {

struct resolve_context {
  std::vector<std::string> roots;                                        // absolute folders
  std::function<bool(const std::string& path)> exists;                   // a regular file to index
  std::function<std::vector<std::string>(const std::string& suffix)> with_suffix;  // indexed paths ending in /suffix
  std::function<std::vector<std::string>(const std::string& dir)> list_dir;        // file names in a folder
};

// The absolute path `imp` of `from_path` resolves to, or "".
std::string resolve_import_path(const std::string& from_path, const import_ref& imp, const resolve_context& ctx);

}  // namespace qf::index
