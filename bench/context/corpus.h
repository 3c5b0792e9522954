// Completion points with ground truth for the context-recall benchmark,
// found by reading the sources directly (no workspace index involved):
//
// * Python: `from .mod import a, b` / `from pkg.mod import a` (one line,
//   parentheses allowed on it) whose module resolves to a .py file of the
//   same package tree that defines `a` at top level (`def a` / `async def a`
//   / `class a`); the point is the first later line of the importing file that
//   uses `a` (not an import, comment or definition line), the cursor just in
//   front of the name.
// * C: a function defined at column 0 in one .c file (not static, its name
//   defined in exactly one file of the project, the body's `{` following
//   before any `;`), called as `name(` on a line of another .c file of the
//   project; the cursor just in front of the name.
//
// The definition's signature line is the line of the `def`/`class` or the C
// line holding the name and its `(`, as written (trailing white space cut).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace qf::bench {

struct source_file {
  std::string path;  // absolute
  std::string text;
};

struct completion_point {
  std::string file;        // the file the completion is asked in
  int64_t line = 0;        // 0-based
  int64_t byte_col = 0;    // in front of the symbol
  std::string symbol;
  std::string def_file;    // where it is defined
  std::string signature;   // the definition's line
};

struct corpus {
  std::string name;
  std::vector<source_file> files;
  std::vector<completion_point> points;  // every point found, in a stable order
};

// Reads the .py files under each root (a package directory) and finds the points.
corpus python_corpus(const std::string& name, const std::vector<std::string>& roots);
// Reads the .c files under each root and finds the points.
corpus c_corpus(const std::string& name, const std::vector<std::string>& roots);

}  // namespace qf::bench
