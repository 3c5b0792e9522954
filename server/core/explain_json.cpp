// prompt_explanation -> JSON (see the header).
#include "server/core/explain_json.h"

#include "text/utf8.h"

namespace qf::server {

boost::json::value explanation_to_json(const prompt_explanation& e) {
  boost::json::array parts;
  for (const prompt_part& p : e.parts)
    parts.push_back(boost::json::object{{"kind", p.kind},
                                        {"origin", text::repair_utf8(p.origin)},
                                        {"text", text::repair_utf8(p.text)},
                                        {"tokens", p.tokens}});
  boost::json::object out{{"format", e.format},
                          {"prompt", text::repair_utf8(e.text)},
                          {"tokens", e.tokens},
                          {"parts", std::move(parts)}};
  if (!e.gates.empty()) {
    boost::json::object gates;
    for (const gate_explanation& g : e.gates)
      gates[g.trigger] = boost::json::object{{"threshold", g.threshold}, {"origin", text::repair_utf8(g.origin)}};
    out["gate"] = std::move(gates);
  }
  return out;
}

}  // namespace qf::server
