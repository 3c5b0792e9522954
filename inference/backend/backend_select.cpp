// Chooses the backend named by model_options::device, falling back from
// "auto" to the CPU with a note that says why (see backend_select.h).
#include "inference/backend/backend_select.h"

#include "inference/core/errors.h"
#if defined(QUICKFILL_HAVE_CUDA)
#include "inference/backend/cuda/cuda_backend.h"
#endif

namespace qf::infer {
namespace {

std::unique_ptr<backend> try_cuda(std::string* why_not) {
#if defined(QUICKFILL_HAVE_CUDA)
  return make_cuda_backend(why_not);
#else
  if (why_not) *why_not = "built without CUDA";
  return nullptr;
#endif
}

}  // namespace

std::unique_ptr<backend> select_backend(const std::string& device, int n_threads, std::string* note) {
  if (device == "cpu") return make_cpu_backend(n_threads);
  if (device == "cuda" || device == "auto") {
    std::string why;
    if (auto be = try_cuda(&why)) return be;
    if (device == "cuda") throw model_error("device 'cuda' requested but unavailable: " + why);
    if (note) *note = "CUDA unavailable (" + why + "), using the CPU";
    return make_cpu_backend(n_threads);
  }
  throw model_error("unknown device '" + device + "' (supported: auto, cpu, cuda)");
}

}  // namespace qf::infer
