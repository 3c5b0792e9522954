// prompt_explanation -> lsp::explain_result (see the header).
#include "server/binding/explain_result.h"

#include "text/utf8.h"

namespace qf::server {

lsp::explain_result explain_result_of(const prompt_explanation& e) {
  lsp::explain_result r;
  r.format = e.format;
  r.prompt = text::repair_utf8(e.text);
  r.tokens = e.tokens;
  for (const prompt_part& p : e.parts)
    r.parts.push_back(lsp::explain_part{p.kind, text::repair_utf8(p.origin), text::repair_utf8(p.text), p.tokens});
  for (const gate_explanation& g : e.gates)
    r.gate.push_back(lsp::explain_gate{g.trigger, g.threshold, text::repair_utf8(g.origin)});
  for (const load_explanation& l : e.load) {
    lsp::explain_load_plan p;
    p.overBudget = l.over_budget;
    p.degraded = l.degraded;
    p.estimateMs = l.estimate_ms;
    p.leftMs = l.left_ms;
    p.waitMs = l.wait_ms;
    p.promptRows = l.prompt_rows;
    p.maxTokens = l.max_tokens;
    p.candidates = l.candidates;
    p.shortened = l.shortened;
    p.candidatesDropped = l.candidates_dropped;
    p.backgroundPaused = l.background_paused;
    if (!l.rerouted_to.empty()) p.reroutedTo = l.rerouted_to;
    p.reason = l.reason;
    r.load.push_back(lsp::explain_load{l.trigger, std::move(p)});
  }
  return r;
}

}  // namespace qf::server
