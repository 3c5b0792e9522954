// Chooses the backend named by model_options::device, falling back from
// "auto" to the CPU with a note that says why.
#include <spdlog/spdlog.h>

#include "inference/backend/backend.h"
#include "inference/model/model.h"

namespace qf::infer {

std::unique_ptr<backend> select_backend(const std::string& device, int n_threads, std::string* note) {
  if (device == "cpu") return make_cpu_backend(n_threads);
  if (device == "cuda" || device == "auto") {
    std::string why;
    if (auto be = make_cuda_backend(&why)) return be;
    if (device == "cuda") throw model_error("device 'cuda' requested but unavailable: " + why);
    if (note) *note = "CUDA unavailable (" + why + "), using the CPU";
    return make_cpu_backend(n_threads);
  }
  throw model_error("unknown device '" + device + "' (supported: auto, cpu, cuda)");
}

}  // namespace qf::infer
