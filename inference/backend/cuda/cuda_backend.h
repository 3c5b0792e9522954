// The CUDA backend's factory (cuda_backend.cpp). qf_cuda depends only on the
// backend interface (inference/backend/backend.h, in qf_backend); the
// selector (backend_select.cpp, in qf_inference) calls this when the build
// has CUDA.
#pragma once

#include <memory>
#include <string>

#include "inference/backend/backend.h"

namespace qf::infer {

// The CUDA backend, or nullptr with *why_not set ("no CUDA device or driver
// found", "CUDA backend failed to start: ...").
std::unique_ptr<backend> make_cuda_backend(std::string* why_not);

}  // namespace qf::infer
