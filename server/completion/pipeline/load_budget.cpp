// The load estimate and the degradation policy (see the header).
#include "server/completion/pipeline/load_budget.h"

#include <algorithm>
#include <cmath>

#include <spdlog/fmt/fmt.h>

namespace qf::server::completion {

load_decision plan_load(const load_request& req, const load_rates& own, const lm_load& load, const load_policy& policy) {
  load_decision d;
  d.max_tokens = req.max_tokens;
  d.candidates = std::max(1, req.candidates);
  d.left_ms = req.left_ms - policy.margin_ms;
  // The engine's rates while others use it (a shared step costs more than
  // this pipeline's own measurements say), else the pipeline's own.
  const bool busy = engine_busy(load);
  const double row_ms = busy && load.ms_per_row > 0 ? load.ms_per_row : own.prefill_ms_per_row;
  const double step_ms = busy && load.ms_per_step > 0 ? load.ms_per_step : own.step_ms;
  if (row_ms <= 0 || step_ms <= 0) {
    d.reason = "no rates measured yet: nothing to estimate";
    return d;
  }
  d.wait_ms = static_cast<double>(std::max<int64_t>(0, load.rows_waiting)) * row_ms;
  const double prompt_ms = static_cast<double>(std::max<int64_t>(0, req.prompt_rows)) * row_ms;
  auto decode_ms = [&](int tokens, int candidates) {
    return static_cast<double>(tokens) * (step_ms + static_cast<double>(candidates - 1) * row_ms);
  };
  d.estimate_ms = d.wait_ms + prompt_ms + decode_ms(d.max_tokens, d.candidates);
  const std::string figures = fmt::format("estimate {:.0f} ms (wait {:.0f}, prompt {} rows {:.0f}, {} x {} tokens {:.0f})",
                                          d.estimate_ms, d.wait_ms, req.prompt_rows, prompt_ms, d.candidates,
                                          d.max_tokens, decode_ms(d.max_tokens, d.candidates));
  if (d.estimate_ms <= d.left_ms) {
    d.reason = figures + fmt::format(" fits the {:.0f} ms left", d.left_ms);
    return d;
  }
  d.over_budget = true;
  if (!policy.enabled) {
    d.reason = figures + fmt::format(" breaks the {:.0f} ms left; completion.degrade is off", d.left_ms);
    return d;
  }
  std::string did;
  if (d.candidates > 1) {
    d.candidates = 1;
    d.candidates_dropped = true;
    did = "one candidate";
  }
  const double room = d.left_ms - d.wait_ms - prompt_ms;
  if (d.wait_ms + prompt_ms + decode_ms(d.max_tokens, d.candidates) > d.left_ms) {
    const double steps = room > 0 ? std::floor(room / step_ms) : 0;
    const int fit = static_cast<int>(std::min<double>(steps, d.max_tokens));
    const int next = std::max(std::min(policy.min_tokens, req.max_tokens), fit);
    if (next < d.max_tokens) {
      d.max_tokens = next;
      d.shortened = true;
      did += (did.empty() ? "" : ", ") + fmt::format("{} tokens", next);
    }
  }
  d.reason = figures + fmt::format(" breaks the {:.0f} ms left: ", d.left_ms) +
             (did.empty() ? std::string("nothing to lower") : did);
  return d;
}

}  // namespace qf::server::completion
