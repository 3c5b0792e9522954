// make_cuda_backend() for builds without the CUDA backend: there is none.
//
// When the CUDA library is built, it defines the real make_cuda_backend() and
// compiles qf_inference with QUICKFILL_HAVE_CUDA so that this definition
// disappears. The definition is also weak, so a strong one linked in wins.
#include "inference/backend/backend.h"

namespace qf::infer {

#if !defined(QUICKFILL_HAVE_CUDA)
__attribute__((weak)) std::unique_ptr<backend> make_cuda_backend(std::string* why_not) {
  if (why_not) *why_not = "built without CUDA";
  return nullptr;
}
#endif

}  // namespace qf::infer
