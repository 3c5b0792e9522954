// The device self-check: a model loaded on a device backend (CUDA) is run
// against the CPU backend on the same file before it serves anyone.
//
// A short prompt (real text through the model's own tokenizer) is evaluated
// on both -- a prefill, which runs the batched kernels, then greedy decode
// steps fed the CPU's choices, which run the one-token kernels -- and the
// logits of every position are compared by normalized squared error, the
// measure the CUDA backend tests use. The model's forward pass is what it
// would run for a user, so every kernel family the model uses (its matmul
// types, norms, RoPE, attention, the KV cache) is exercised. A device error
// or out-of-memory during the check is a failure too, with its message.
//
// The caller decides what to do with a failure (the server falls back to the
// CPU, server/completion/decode/engine_backend.cpp) and how to cache the verdict.
#pragma once

#include <string>

namespace qf::infer {

class model;

struct device_check_options {
  int n_threads = 0;        // of the CPU reference (<= 0: hardware concurrency)
  int decode_steps = 4;     // greedy steps after the prefill
  // Largest normalized squared error accepted at any position. The backend
  // tests hold F16/F32 files to 1e-4; quantized weights are multiplied by
  // kernels that round their activations differently on each backend, so the
  // check allows ten times that. A wrong kernel gives errors near 1.
  double max_nmse = 1e-3;
};

struct device_check_report {
  bool passed = false;
  std::string device;       // the checked model's backend, described
  std::string failure;      // why not, for people (empty when passed)
  double worst_nmse = 0;    // largest normalized squared error seen
  std::string worst_at;     // "prefill position 3", "decode step 1"
  int positions = 0;        // positions compared
};

// Checks `device_model` (already loaded on its device from `path`) against a
// CPU load of `path`. Never throws: errors of either side are reported.
device_check_report check_against_cpu(const model& device_model, const std::string& path,
                                      const device_check_options& opts = {});

}  // namespace qf::infer
