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
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "indexing/syntax_language.h"

namespace qf::index {

// A byte range [begin, end] of the text (a suggestion's place).
struct byte_span {
  std::size_t begin = 0, end = 0;
};

struct syntax_check {
  // Error nodes: the outermost ERROR nodes and MISSING nodes, by where they
  // lie relative to the span: ending before it, inside it, straddling one of
  // its ends (an end at span.begin or a start at span.end touches), starting
  // after it.
  std::size_t errors_before = 0, errors_within = 0, errors_at = 0, errors_after = 0;
  std::size_t error_bytes_at = 0;  // bytes under the errors within or at the span (a MISSING node counts 1)
  std::size_t errors() const { return errors_before + errors_within + errors_at + errors_after; }
  // The end byte of the first error node that starts inside the span
  // (SIZE_MAX: none): a cut of the span's text past that byte keeps the
  // error too, as a rule.
  std::size_t first_error_end_within = SIZE_MAX;
  std::size_t first_error_start_within_ = SIZE_MAX;  // (which error that is)
  // The end byte of the outermost named node other than the root with
  // start < `cursor` < end < `limit` that spans more than one line: the
  // construct being written at the cursor, when it ends before `limit`.
  // 0 when there is none.
  std::size_t block_end = 0;
};

// Parses `text` with `language` within `budget` of the thread's CPU time.
// `span`, `cursor` and `limit` are byte offsets into `text`.
std::optional<syntax_check> check_syntax(const syntax_language& language, std::string_view text, byte_span span,
                                         std::size_t cursor, std::size_t limit, std::chrono::microseconds budget);

// Checks of texts inserted at one place of a fixed text: `before` + insert +
// `after`. The text without insertion is parsed once; each check edits a
// copy of that tree (an insertion at the cursor) and reparses incrementally,
// so it costs about the region the insertion changes. Offsets in spans and
// results are into before + insert + after; the cursor is before.size().
class syntax_probe {
 public:
  syntax_probe(const syntax_language& language, std::string_view before, std::string_view after);
  ~syntax_probe();
  syntax_probe(const syntax_probe&) = delete;
  syntax_probe& operator=(const syntax_probe&) = delete;

  // The text without insertion; nullopt when the parse did not finish in `budget`.
  std::optional<syntax_check> base(byte_span span, std::chrono::microseconds budget);
  // `insert` at the cursor (after a successful base()); `limit` as in check_syntax.
  std::optional<syntax_check> check(std::string_view insert, byte_span span, std::size_t limit,
                                    std::chrono::microseconds budget);

 private:
  struct impl;
  impl* impl_;
};

// True when this build can parse (tree-sitter compiled in).
bool syntax_checks_available();

// CPU time the calling thread has used (the clock the budgets count).
std::chrono::microseconds thread_cpu_time();

}  // namespace qf::index
