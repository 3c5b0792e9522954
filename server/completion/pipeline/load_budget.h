// The time a request needs, estimated before its engine work, and how it is
// degraded when that breaks its deadline (docs/completion.md, "Under load").
//
// The estimate: the prompt rows left to evaluate after the cache's reuse at
// the engine's prefill rate, plus max_tokens decode steps (each extra
// candidate adds one row to every step; the pipeline's own time per token
// counts the tokens speculation adds to a step), plus, on a shared engine that is
// busy, the wait for the other sequences' rows (lm_load::rows_waiting x
// ms_per_row). The rates are the pipeline's own moving averages, or the
// engine's (lm_load) while other sequences use it. When the estimate exceeds
// the time left less a margin, the extra candidates are dropped (n -> 1) and,
// if it still does not fit, max_tokens is cut to the steps that fit, never
// below a floor. Unknown rates (nothing measured yet) degrade nothing.
#pragma once

#include <cstdint>
#include <string>

#include "server/completion/api/lm.h"

namespace qf::server::completion {

struct load_rates {
  double prefill_ms_per_row = 0;  // the pipeline's own (0: not measured)
  double step_ms = 0;             // decoding, per generated token (0: not measured)
};

struct load_request {
  int64_t prompt_rows = 0;  // prompt tokens to evaluate (after the cache's reuse)
  int max_tokens = 0;
  int candidates = 1;
  double left_ms = 0;       // time left to the deadline
};

struct load_policy {
  bool enabled = true;
  int min_tokens = 8;
  double margin_ms = 20;
};

struct load_decision {
  double estimate_ms = 0;  // with the request as asked
  double wait_ms = 0;      // for other sequences' rows
  double left_ms = 0;      // the time left, less the margin
  bool over_budget = false;  // the estimate breaks it (whether or not the policy degrades)
  int max_tokens = 0;      // what the request gets
  int candidates = 1;
  bool shortened = false, candidates_dropped = false;
  std::string reason;      // one line for people
};

// Whether other sequences' work runs on the engine now (its shared rates apply).
inline bool engine_busy(const lm_load& l) { return l.sequences > 0 || l.rows_waiting > 0; }
// Background work waits while others' requests use the engine (not while
// their background work does: two idle sessions would pause each other's).
inline bool foreground_busy(const lm_load& l) { return l.foreground > 0; }

load_decision plan_load(const load_request& req, const load_rates& own, const lm_load& load, const load_policy& policy);

}  // namespace qf::server::completion
