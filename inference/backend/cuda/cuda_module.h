// The CUDA backend as a module loaded at run time.
//
// Linking cuBLAS into the executable costs about 150 MiB of resident memory
// at start-up (the libraries' relocated data), on machines without a GPU
// too. So the CUDA backend is built a second time as a shared module,
// libquickfill-cuda.so, which alone links cudart and cuBLAS; the selector
// (backend_select.cpp) loads it with dlopen only when the CUDA driver
// (libcuda.so.1) can be loaded, and never unloads it. The module exports one
// C function; the executable and the module are built from the same sources
// in the same build, and the ABI number below guards against a module left
// over from another build: bump it whenever inference/backend/backend.h or
// the types it uses change.
#pragma once

#include <string>

namespace qf::infer {
class backend;
}

#define QUICKFILL_CUDA_MODULE_NAME "libquickfill-cuda.so"
#define QUICKFILL_CUDA_MODULE_ENTRY "quickfill_cuda_make_backend"

namespace qf::infer {
inline constexpr int k_cuda_module_abi = 5;
// The entry point: a new backend (owned by the caller, deleted through its
// virtual destructor) or nullptr with *why_not set. Returns nullptr with
// "module ABI mismatch" when `abi` differs from the module's.
using cuda_module_entry = backend* (*)(int abi, std::string* why_not);
}  // namespace qf::infer
