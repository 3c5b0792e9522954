// The exported entry point of libquickfill-cuda.so (see cuda_module.h).
#include "inference/backend/cuda/cuda_module.h"

#include "inference/backend/cuda/cuda_backend.h"

extern "C" __attribute__((visibility("default"))) qf::infer::backend* quickfill_cuda_make_backend(
    int abi, std::string* why_not) {
  if (abi != qf::infer::k_cuda_module_abi) {
    if (why_not) {
      *why_not = "module ABI mismatch (module " + std::to_string(qf::infer::k_cuda_module_abi) + ", executable " +
                 std::to_string(abi) + "): " QUICKFILL_CUDA_MODULE_NAME " is from another build";
    }
    return nullptr;
  }
  try {
    return qf::infer::make_cuda_backend(why_not).release();
  } catch (const std::exception& e) {
    if (why_not) *why_not = std::string("CUDA backend failed to start: ") + e.what();
    return nullptr;
  }
}
