// Choosing a backend by name (model_options::device).
//
// The selector is the one place that knows every backend. It is built into
// qf_inference, the library above qf_backend (the interface and the CPU
// backend). With QUICKFILL_HAVE_CUDA it loads the CUDA backend from the
// module libquickfill-cuda.so at run time (cuda/cuda_module.h), so that
// only a machine with the CUDA driver maps cudart and cuBLAS; the libraries
// depend one way and no symbol is resolved by link order or weak
// definitions.
#pragma once

#include <memory>
#include <string>

#include "inference/backend/backend.h"

namespace qf::infer {

// Picks the backend for model_options::device: "cpu"; "cuda" (throws
// model_error when unavailable, with the reason: "built without CUDA", "no
// CUDA device or driver found", ...); "auto" (cuda when available, else cpu,
// and *note says why). Throws model_error for any other name.
std::unique_ptr<backend> select_backend(const std::string& device, int n_threads, std::string* note);

}  // namespace qf::infer
