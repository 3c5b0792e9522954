// quickfill/explainCompletion: what the model would be given for a completion
// at a position. Params as textDocument/completion ({textDocument: {uri},
// position}); the result is explanation_to_json() of the provider's explain():
// {format, prompt, tokens, parts: [{kind, origin, text, tokens}]}.
//
// It runs on the inference worker like a completion, so it waits for a model
// load in progress and never reads the provider from another thread; it is
// cancellable ($/cancelRequest -> -32800) and an edit of the document cancels
// it (-32801). Without a model it fails with RequestFailed and the reason; an
// unknown document is InvalidParams, a stale or untracked one RequestFailed,
// as for completions. A document kept out of prompts (privacy.exclude,
// privacy.disabledLanguages) fails with RequestFailed saying why: no prompt is
// ever built for it.
#include "server/core/explain_json.h"
#include "server/binding/lsp_server.h"

namespace qf::server {

using lsp::error_code;

void lsp_server::start_explain(const std::string& uri, const lsp::position& pos, const lsp::reply_once& reply) {
  index::document_store::snapshot doc;
  completion_request req = make_request(uri, pos, doc);
  if (const std::string why = core_.why_private(uri); !why.empty())
    throw lsp::rpc_error(error_code::request_failed,
                         uri + " is kept out of completions and prompts (" + why + "); there is no prompt to explain");
  req.explicit_trigger = true;
  req.received = clock::now();
  auto on_cancel = [reply](cancel_reason why) {
    if (!reply.replied()) reply.error(static_cast<error_code>(cancel_error_code(why)), cancel_message(why));
  };
  auto done = [this, reply, doc, uri](std::optional<prompt_explanation> e, bool no_model) {
    if (reply.replied()) return;
    if (core_.documents().get(uri) != doc) {
      reply.error(error_code::content_modified, cancel_message(cancel_reason::content_modified));
      return;
    }
    if (no_model) {
      const model_state m = core_.model();
      reply.error(error_code::request_failed, "no model is loaded, so there is no prompt to explain" +
                                                  (m.error.empty() ? std::string() : ": " + m.error));
      return;
    }
    if (!e) {
      reply.error(error_code::request_failed, "the completion provider cannot explain its prompt");
      return;
    }
    reply.result(explanation_to_json(*e));
  };
  core_.explain(lsp::id_to_string(reply.id()), std::move(req), std::move(done), std::move(on_cancel));
}

}  // namespace qf::server
