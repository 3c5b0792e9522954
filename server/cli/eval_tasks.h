// The tasks of `quickfill eval`: a document with a hole, the text that fills
// it, and (for HumanEval-infilling) the test that judges a filled program.
//
// A task's document is `prompt + suffix` with the cursor at the end of
// `prompt`, as an editor holds a file whose middle is missing. HumanEval's
// tasks come from the benchmark's gzip'd JSON Lines files (read through
// `gzip -dc`, no compression library); points picked from a repository
// (eval_repo.h) have no test and are judged by exact match and similarity.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace qf::cli {

struct eval_task {
  std::string id;           // "SingleLineInfilling/HumanEval/0/L0", "repo:src/a.py:12:line"
  std::string uri;          // the document's URI in the request
  std::string language;     // LSP language id ("python")
  std::string prompt;       // the text before the hole
  std::string suffix;       // the text after it
  std::string middle;       // the truth (HumanEval's canonical_solution)
  std::string test;         // Python `check(candidate)`; empty: no execution
  std::string entry_point;  // the function `check` is called with
  std::string kind;         // repo points: "line", "span", "body"; HumanEval: the benchmark
};

// Where the hole is: the line and the byte column of the end of `prompt`.
struct hole_position {
  int64_t line = 0, col = 0;
};
hole_position hole_of(const eval_task& t);

// The file of a benchmark name (humaneval-single|humaneval-multi|humaneval-span);
// "" for an unknown name.
std::string humaneval_file(const std::string& benchmark);

// The first `limit` (0: all) tasks of a HumanEval-infilling .jsonl.gz file.
// False with *error when the file is missing, unreadable or holds a line
// that is not a task.
bool load_humaneval(const std::string& path, const std::string& benchmark, int limit, std::vector<eval_task>& out,
                    std::string* error);

}  // namespace qf::cli
