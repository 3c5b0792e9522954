// Asks the real completion provider for a suggestion at a task's hole the
// way the server does for an editor, and judges it.
//
// The request is the one server_core builds: the document `prompt + suffix`
// as a snapshot with its language and syntax tree (the syntax_index's parse,
// complete since nothing waits for typing), the cursor at the hole, the
// trigger kind, an inline request, the deadline of that kind
// (completion.autoDeadlineMs / explicitDeadlineMs) from the moment it is
// sent, and, for repository points, the workspace index. An answer cut short
// by the deadline before its prompt was evaluated (empty and incomplete) is
// asked again after the provider's background work has run, as an editor
// asks again on the next keystroke (at most `max_tries` times); the latency
// is that of the answer used. The document is closed afterwards, so no cache
// or type-through suggestion carries over to the next task.
//
// The confidence gate is applied here, not in the provider: the provider is
// configured with the gate off so that every suggestion comes back with its
// score, and a suggestion is "shown" when its score reaches the threshold the
// pipeline would apply (completion::resolve_gate). The pipeline gates the
// candidates best score first, so this is exactly what it would show.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "server/cli/eval_sandbox.h"
#include "server/cli/eval_tasks.h"
#include "server/completion/api/completion_provider.h"

namespace qf::index {
class syntax_index;
class definition_source;
}  // namespace qf::index

namespace qf::cli {

struct eval_request_options {
  int auto_deadline_ms = 400;
  int explicit_deadline_ms = 2000;
  int max_tries = 4;
  double gate_auto = -100;      // the thresholds the pipeline would apply
  double gate_explicit = -100;
};

// One task, one trigger kind: the answer and its scores.
struct eval_record {
  const eval_task* task = nullptr;
  bool explicit_trigger = false;
  std::string middle;           // what the suggestion inserts at the hole ("" : no suggestion)
  std::optional<double> score;  // the suggestion's confidence
  bool suggested = false;       // a non-empty suggestion came back
  bool shown = false;           // ... and the gate lets it through
  bool exact = false;
  double similarity = 0;
  bool executed = false;        // the task has a test and it was run
  bool passed = false;
  bool syntax_checked = false;  // syntax_ok is known (Python compiled it, or the grammar parsed both files)
  bool syntax_ok = false;       // the filled program compiles (a test's task) / parses with no error the original lacks
  std::string error;            // why it failed (the test's last lines)
  int tries = 0;                // requests sent (more than 1: the first was cut short)
  double latency_ms = 0;        // of the answer used
  int64_t prompt_tokens = 0;
  int64_t generated_tokens = 0;
};

// Asks and judges one task (runs its test when it has one).
eval_record eval_one(server::completion_provider& provider, index::syntax_index& syntax,
                     const std::shared_ptr<const index::definition_source>& definitions, const eval_task& task,
                     bool explicit_trigger, const eval_request_options& opts, const sandbox_limits& limits);

}  // namespace qf::cli
