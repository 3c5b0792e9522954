// The remote source kinds: "openai" (OpenAI-compatible /v1/completions with
// a suffix: vLLM, SGLang, TGI, llama-server) and "llama-infill"
// (llama-server's /infill), both made by server/remote/ (docs/remote.md
// lists their members). A remote source takes the pipeline's completion
// settings too, so that its answers end by the same stop rules as a local
// model's.
#pragma once

#include "server/routing/source_registry.h"

namespace qf::server::routing {

// Registers "openai" and "llama-infill" in `r`.
void register_remote_kinds(source_registry& r);

}  // namespace qf::server::routing
