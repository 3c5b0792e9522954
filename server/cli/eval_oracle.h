// The trim rules of post-processing judged against the truth, independent of
// any model (`quickfill eval --oracle`, bench/postprocess/trim_oracle).
//
// For a task the document is `prompt + suffix` with the cursor at the hole,
// as an editor holds it. The "model" then writes the truth -- the reference
// middle followed by the true text after it -- and the pipeline's
// post-processing runs on it exactly as on a model's output: the text streams
// through the stop checker (one character at a time, as if each were a
// token), the kept text is finalized with the file's grammar, and the result
// is what would be inserted. It is exact when it equals the middle: inserting
// it gives the original program. On an empty (or blank) line the suggestion
// fills that line and has no line break of its own, where the middle may end
// with one (the hole took the line's break): such a result gives the program
// with one empty line less, counted apart as "the same lines", as are results
// that differ from the middle only by spaces at line ends (which the rules
// trim).
#pragma once

#include <string>
#include <vector>

#include "server/cli/eval_tasks.h"
#include "server/completion/api/settings.h"

namespace qf::cli {

enum class oracle_verdict { exact, same_lines, miss };

struct oracle_result {
  std::string kept;  // what post-processing keeps ("<no completion here>": the trigger rules skip)
  oracle_verdict verdict = oracle_verdict::miss;
};

// What post-processing keeps of the truth at the hole of `t`, and its verdict.
oracle_result trim_oracle(const eval_task& t, bool explicit_trigger,
                          const server::completion::completion_settings& s);

struct oracle_totals {
  int tasks = 0, exact = 0, same_lines = 0;
  std::vector<std::pair<const eval_task*, std::string>> misses;  // the first `show` misses and what was kept
};

// Runs trim_oracle over `tasks` for one trigger kind.
oracle_totals run_trim_oracle(const std::vector<eval_task>& tasks, bool explicit_trigger,
                              const server::completion::completion_settings& s, int show);

// `s` without trailing spaces and tabs on each line (the rules trim them).
std::string rstrip_lines(const std::string& s);

}  // namespace qf::cli
