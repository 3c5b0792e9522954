// quickfill/explainCompletion: what the model would be given for a completion
// at a position. Params as textDocument/completion ({textDocument: {uri},
// position}); the result is the provider's explain() as lsp::explain_result
// (explain_result.h): {format, prompt, tokens, parts: [{kind, origin, text,
// tokens}], gate?}.
//
// The core runs it on the inference worker like a completion
// (server_core::request_explanation), so it waits for a model load in
// progress and never reads the provider from another thread; it is
// cancellable ($/cancelRequest -> -32800) and an edit of the document cancels
// it (-32801). Without a model it fails with RequestFailed and the reason; an
// unknown document is InvalidParams, a stale or untracked one RequestFailed,
// as for completions. A document kept out of prompts (privacy.exclude,
// privacy.disabledLanguages) fails with RequestFailed saying why: no prompt is
// ever built for it. The codes: lsp_errors.h.
#include "server/binding/explain_result.h"
#include "server/binding/lsp_errors.h"
#include "server/binding/lsp_server.h"

namespace qf::server {

void lsp_server::start_explain(const std::string& uri, const lsp::position& pos, const lsp::reply_once& reply) {
  std::optional<request_place> at = place_of(uri, pos, reply);
  if (!at) return;
  explain_call call;
  call.key = lsp::id_to_string(reply.id());
  call.at = std::move(*at);
  core_.request_explanation(std::move(call), [reply](outcome<prompt_explanation> o) {
    if (const auto* f = std::get_if<request_failure>(&o)) return reply_failure(reply, *f);
    reply.result_of(explain_result_of(std::get<prompt_explanation>(o)));
  });
}

}  // namespace qf::server
