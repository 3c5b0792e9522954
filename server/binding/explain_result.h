// A prompt explanation (completion_provider::explain) as the typed result of
// quickfill/explainCompletion, which `quickfill prompt --json` prints too
// (one shape for both; lsp/protocol_quickfill.h). Texts are made valid UTF-8:
// a document is, but a model's token pieces need not be.
#pragma once

#include "lsp/protocol_quickfill.h"
#include "server/completion/api/completion_provider.h"

namespace qf::server {

lsp::explain_result explain_result_of(const prompt_explanation& e);

}  // namespace qf::server
