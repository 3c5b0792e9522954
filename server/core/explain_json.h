// A prompt explanation as JSON: the result of quickfill/explainCompletion and
// of `quickfill prompt --json` (one shape for both):
//   {format, prompt, tokens, parts: [{kind, origin, text, tokens}],
//    gate: {automatic: {threshold, origin}, explicit: {threshold, origin}}}
// (gate: the confidence gate of each trigger kind and where it came from,
// "setting", "calibrated PATH" or "default"; absent when the provider does not say)
// Texts are made valid UTF-8 (a document is, but a model's token pieces need
// not be).
#pragma once

#include <boost/json.hpp>

#include "server/completion/api/completion_provider.h"

namespace qf::server {

boost::json::value explanation_to_json(const prompt_explanation& e);

}  // namespace qf::server
