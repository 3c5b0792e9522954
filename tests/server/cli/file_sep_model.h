// A synthetic model whose greedy decoding emits <|file_sep|> after any input
// (synth_spec::emit_token), for the tests of what quickfill makes of a model
// that ends at once: a completion suggests nothing, a sweep rewrite deletes
// its region, a zeta rewrite never finishes.
#pragma once

#include <cstdint>
#include <string>

#include "inference/convert/synth_model.h"
#include "inference/convert/synth_vocab.h"

namespace qf::test {

// Writes the model (qwen2 layout, the tiny preset with 1024 tokens and a
// 2048 context, untied, f32) to `path`; returns the <|file_sep|> token id.
inline int64_t write_file_sep_model(const std::string& path) {
  auto spec = infer::convert::synth_preset("tiny", "qwen2");
  spec.n_vocab = 1024;
  spec.n_ctx = 2048;
  spec.tied = false;
  spec.emit_token = infer::convert::make_synth_vocab(spec.n_vocab, spec.seed).file_sep;
  infer::convert::write_synth_model(spec, infer::ggml_type::f32, path);
  return spec.emit_token;
}

}  // namespace qf::test
