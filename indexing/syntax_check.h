// One-off parses of short texts, for checks on generated code.
//
// check_syntax parses a string (a window of a document with a suggestion
// inserted, typically a few KiB) from scratch within a budget of the calling
// thread's CPU time, and reads from the tree what post-processing needs: how
// many error nodes it holds and how many bytes they cover, and where the
// outermost construct that started before a given offset ends. The walks are
// iterative (deep nesting costs no native stack) and skip subtrees without
// errors. The parser is kept per thread and per grammar. Without tree-sitter
// in the build, or when the budget runs out, there is no result (nullopt):
// the caller falls back to rules that need no tree.
#pragma once

#include <chrono>
#include <cstddef>
#include <optional>
#include <string_view>

#include "indexing/syntax_language.h"

namespace qf::index {

struct syntax_check {
  std::size_t errors = 0;       // ERROR nodes (outermost ones) and MISSING nodes
  std::size_t error_bytes = 0;  // bytes covered by those ERROR nodes, plus one per MISSING node
  // The end byte of the outermost named node other than the root with
  // start < `cursor` < end < `limit` that spans more than one line: the
  // construct being written at the cursor, when it ends before `limit`.
  // 0 when there is none.
  std::size_t block_end = 0;
};

// Parses `text` with `language` within `budget` of the thread's CPU time.
// `cursor` and `limit` are byte offsets into `text` (see block_end).
std::optional<syntax_check> check_syntax(const syntax_language& language, std::string_view text, std::size_t cursor,
                                         std::size_t limit, std::chrono::microseconds budget);

// True when this build can parse (tree-sitter compiled in).
bool syntax_checks_available();

// CPU time the calling thread has used (the clock the budgets count).
std::chrono::microseconds thread_cpu_time();

}  // namespace qf::index
