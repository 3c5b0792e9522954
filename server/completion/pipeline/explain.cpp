// pipeline::explain(): the prompt complete() would give the model for a
// request, part by part. It builds the prompt the same way (the document's
// layout reused while still valid, else a new one) but on a scratch copy of
// the document's layout, and evaluates nothing: the KV slots, the per-document
// state and the background queue are left as they were. The parts are the
// layout's head parts (layout_part) and the middle; their token counts add up
// to the prompt's and their texts concatenate to the prompt's text. The load
// plan of each trigger kind (load_budget.h) is estimated from the same scratch
// prompt and the cache's reuse, with the trigger's budget from now.
#include <algorithm>
#include <chrono>

#include "server/completion/pipeline/pipeline.h"
#include "server/completion/postprocess/cursor_context.h"
#include "server/completion/postprocess/syntax_rules.h"

namespace qf::server::completion {

namespace {

double ms_until(clock::time_point t) { return std::chrono::duration<double, std::milli>(t - clock::now()).count(); }

}  // namespace

prompt pipeline::scratch_prompt(const completion_request& req, doc_state& scratch) {
  const cursor_context cx = make_cursor_context(req.text, req.cursor.line, req.cursor.byte_col);
  if (auto it = docs_.find(req.cache_key()); it != docs_.end()) {
    scratch.lay = it->second.lay;
    scratch.parked = it->second.parked;
    if (it->second.pending_ready) {
      scratch.pending = it->second.pending;
      scratch.pending_ready = true;
    }
  }
  take_request(scratch, req, cx.line, cx.col);
  std::vector<extra_doc> extra;
  layout_input in = input_of(scratch, extra);
  if (scratch.pending_ready && builder_.still_valid(in, scratch.pending)) scratch.lay = scratch.pending;
  return builder_.build(in, scratch.lay, /*force_relayout=*/false, &scratch.parked);
}

std::optional<load_explanation> pipeline::load_plan(const completion_request& req) {
  if (req.deadline.time_since_epoch().count() == 0) return std::nullopt;
  doc_state scratch;
  const prompt p = scratch_prompt(req, scratch);
  const int64_t rows = static_cast<int64_t>(p.tokens.size()) - pool_->cached_prefix(p.tokens);
  const sampling_settings& cls = req.explicit_trigger ? s_.sampling_explicit : s_.sampling_auto;
  // As run() does: decoding ends the syntax pass's budget before the deadline.
  const double left = ms_until(req.deadline) - (s_.stop_rules ? std::chrono::duration<double, std::milli>(k_syntax_budget).count() : 0.0);
  const load_decision d = decide_load(rows, max_tokens_of(req), cls.candidates, left);
  load_explanation e;
  e.trigger = req.explicit_trigger ? "explicit" : "automatic";
  e.over_budget = d.over_budget;
  e.degraded = d.over_budget && s_.degrade;
  e.estimate_ms = d.estimate_ms;
  e.left_ms = d.left_ms;
  e.wait_ms = d.wait_ms;
  e.prompt_rows = std::max<int64_t>(0, rows);
  e.max_tokens = d.max_tokens;
  e.candidates = d.candidates;
  e.shortened = d.shortened;
  e.candidates_dropped = d.candidates_dropped;
  e.background_paused = s_.degrade && foreground_busy(backend_->load());
  e.reason = d.reason;
  return e;
}

std::optional<prompt_explanation> pipeline::explain(const completion_request& req) {
  doc_state scratch;
  const prompt p = scratch_prompt(req, scratch);

  prompt_explanation ex;
  ex.format = fmt_.family;
  for (const layout_part& lp : scratch.lay.parts) ex.parts.push_back({lp.kind, lp.origin, lp.text, lp.tokens});
  const int64_t middle_tokens = static_cast<int64_t>(p.tokens.size()) - p.head_len;
  if (middle_tokens > 0 || !p.middle_text.empty())
    ex.parts.push_back({"middle", req.uri + ":" + std::to_string(scratch.lay.anchor_line + 1), p.middle_text,
                        middle_tokens});
  for (const prompt_part& part : ex.parts) {
    ex.text += part.text;
    ex.tokens += part.tokens;
  }
  for (bool expl : {false, true}) {
    const gate_choice g = gate(expl);
    ex.gates.push_back({expl ? "explicit" : "automatic", g.threshold, g.origin});
  }
  // The load plan of each trigger kind, with its budget from now.
  for (bool expl : {false, true})
    if (std::optional<completion_request> r = as_trigger_now(req, expl, clock::now()))
      if (std::optional<load_explanation> l = load_plan(*r)) ex.load.push_back(std::move(*l));
  return ex;
}

}  // namespace qf::server::completion
