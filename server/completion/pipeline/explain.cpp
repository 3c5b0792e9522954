// pipeline::explain(): the prompt complete() would give the model for a
// request, part by part. It builds the prompt the same way (the document's
// layout reused while still valid, else a new one) but on a scratch copy of
// the document's layout, and evaluates nothing: the KV slots, the per-document
// state and the background queue are left as they were. The parts are the
// layout's head parts (layout_part) and the middle; their token counts add up
// to the prompt's and their texts concatenate to the prompt's text.
#include <algorithm>

#include "server/completion/pipeline/pipeline.h"
#include "server/completion/postprocess/cursor_context.h"

namespace qf::server::completion {

std::optional<prompt_explanation> pipeline::explain(const completion_request& req) {
  const cursor_context cx = make_cursor_context(req.text, req.cursor.line, req.cursor.byte_col);
  doc_state scratch;
  if (auto it = docs_.find(req.cache_key()); it != docs_.end()) {
    scratch.lay = it->second.lay;
    if (it->second.pending_ready) {
      scratch.pending = it->second.pending;
      scratch.pending_ready = true;
    }
  }
  take_request(scratch, req, cx.line, cx.col);
  std::vector<extra_doc> extra;
  layout_input in = input_of(scratch, extra);
  if (scratch.pending_ready && builder_.still_valid(in, scratch.pending)) scratch.lay = scratch.pending;
  const prompt p = builder_.build(in, scratch.lay);

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
  return ex;
}

}  // namespace qf::server::completion
