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
  return r;
}

}  // namespace qf::server
