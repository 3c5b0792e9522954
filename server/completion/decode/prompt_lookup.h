// Prompt-lookup drafting for speculative decoding.
//
// Code completions often copy text that is already in the prompt (a name, a
// call pattern, the rest of a line seen elsewhere). The drafter finds the most
// recent earlier occurrence of the last n tokens of the history and proposes
// the tokens that followed it. The draft is verified by the model in one batch
// (see generator.cpp), so the output is exactly what greedy decoding gives;
// a good draft only makes it faster.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace qf::server::completion {

// Up to `max_draft` tokens following the latest earlier match of the last
// `ngram` tokens of `history` (tries shorter n-grams down to 1 when none).
std::vector<int32_t> prompt_lookup_draft(std::span<const int32_t> history, int ngram, int max_draft);

}  // namespace qf::server::completion
