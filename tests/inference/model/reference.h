// A naive reference forward pass over a synthetic model's float weights, in
// double precision, written from the architecture definitions (not from the
// engine's code): the engine's logits are compared against it.
#pragma once

#include <cstdint>
#include <vector>

#include "tests/inference/model/synthetic.h"

namespace qf::test {

// Logits [n_tokens][n_vocab] for tokens at positions 0..n-1.
std::vector<std::vector<double>> reference_logits(const synth_model& m, const std::vector<int32_t>& tokens);

}  // namespace qf::test
