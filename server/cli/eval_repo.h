// FIM points picked from the user's own repository (`quickfill eval --repo`),
// the way CrossCodeEval and RepoBench pick them, in three kinds, in turn:
//
// * line: the rest of a line from a cursor after its indentation or after a
//   token boundary in its first half (line completion);
// * span: a random span of 8 to 160 characters starting on a non-blank line
//   (HumanEval's random-span infilling on real files);
// * body: the body of a function (a header line ending with `:` or `{` that
//   names a function), 2 to 30 lines, the cursor at the start of its first line.
//
// Files: source files under DIR in a language quickfill knows (by extension),
// up to 256 KiB, UTF-8, outside hidden folders and build or dependency
// folders, and not private (the default privacy.exclude list: .env, keys).
// A file is drawn at random (seeded), then a point of the next kind in it.
// The document of a point is the file with the middle removed; there is no
// test, so points are judged by exact match, edit similarity and syntax.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "server/cli/eval_tasks.h"

namespace qf::cli {

// The LSP language id of a file by its extension ("" : not a language eval picks points in).
std::string repo_language(const std::string& path);

// Up to `points` points from `dir` (fewer when the files do not hold them).
// False with *error when `dir` is no folder or holds no source file.
bool pick_repo_points(const std::string& dir, int points, uint64_t seed, std::vector<eval_task>& out,
                      std::string* error);

}  // namespace qf::cli
