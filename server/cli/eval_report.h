// The figures of `quickfill eval`: records summed up per trigger kind, as a
// text table (one column per run and trigger kind, so --compare reads side
// by side) and as JSON (summaries and, per task, what was suggested).
#pragma once

#include <string>
#include <vector>

#include <boost/json.hpp>

#include "server/cli/eval_runner.h"

namespace qf::cli {

struct eval_summary {
  std::string trigger;  // "automatic", "explicit"
  std::string language; // the tasks of this language only ("" : all)
  int tasks = 0;
  int suggested = 0, shown = 0;  // a non-empty suggestion; one the gate lets through
  int exact = 0;
  double similarity = 0;         // mean edit similarity (no suggestion: similarity of "")
  int executed = 0, passed = 0;  // tasks with a test; those whose program passed (pass@1)
  int passed_shown = 0;          // passed and shown
  int syntax_checked = 0, syntax_ok = 0;
  int retried = 0;               // first answer cut short, asked again
  double latency_p50 = 0, latency_p90 = 0;
  double prompt_tokens = 0, generated_tokens = 0;  // means
  double gate = -100;
  std::string gate_origin;
};

// One run: a model with its settings, over one set of tasks.
struct eval_run {
  std::string label;       // "A", "B" or the model's name
  std::string model;       // the provider's description
  std::string model_path;
  std::string settings;    // the --settings JSON given ("" : defaults)
  std::vector<eval_record> records;
  std::vector<eval_summary> summaries;  // one per trigger kind run
};

// The records of one trigger kind (and of one language when `language` is not empty).
eval_summary summarize(const std::vector<eval_record>& records, bool explicit_trigger, double gate,
                       const std::string& gate_origin, const std::string& language = "");

// The table of the runs' summaries (a column per run and trigger kind).
std::string format_table(const std::vector<eval_run>& runs);

// {benchmark, tasks, network, runs: [{label, model, settings, summaries: [...], records: [...]}]}
boost::json::object runs_to_json(const std::string& benchmark, const std::vector<eval_run>& runs,
                                 const std::string& network, bool with_records);

}  // namespace qf::cli
