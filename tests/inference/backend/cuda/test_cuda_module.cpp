// The CUDA module (libquickfill-cuda.so) loads on its own, exports its entry
// point, refuses a caller of another ABI and, on a machine without a device,
// says so instead of returning a backend.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "inference/backend/backend.h"
#include "inference/backend/cuda/cuda_backend.h"
#include "inference/backend/cuda/cuda_module.h"

namespace {

using namespace qf::infer;

cuda_module_entry load_entry(std::string* err) {
  void* h = dlopen(QUICKFILL_CUDA_MODULE_PATH, RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    const char* e = dlerror();
    *err = e ? e : "dlopen failed";
    return nullptr;
  }
  auto entry = reinterpret_cast<cuda_module_entry>(dlsym(h, QUICKFILL_CUDA_MODULE_ENTRY));
  if (!entry) *err = "no entry point";
  return entry;
}

TEST(CudaModule, LoadsAndExportsItsEntryPoint) {
  std::string err;
  cuda_module_entry entry = load_entry(&err);
  ASSERT_NE(entry, nullptr) << err;
}

TEST(CudaModule, RefusesAnotherAbi) {
  std::string err;
  cuda_module_entry entry = load_entry(&err);
  ASSERT_NE(entry, nullptr) << err;
  std::string why;
  EXPECT_EQ(entry(k_cuda_module_abi + 1, &why), nullptr);
  EXPECT_NE(why.find("ABI mismatch"), std::string::npos) << why;
}

TEST(CudaModule, AgreesWithTheLinkedBackendAboutTheDevice) {
  std::string err;
  cuda_module_entry entry = load_entry(&err);
  ASSERT_NE(entry, nullptr) << err;
  std::string why_module, why_linked;
  std::unique_ptr<backend> from_module(entry(k_cuda_module_abi, &why_module));
  std::unique_ptr<backend> linked = make_cuda_backend(&why_linked);
  EXPECT_EQ(from_module != nullptr, linked != nullptr) << why_module << " / " << why_linked;
  if (!linked) {
    EXPECT_EQ(why_module, why_linked);
  } else {
    EXPECT_EQ(from_module->name(), linked->name());
  }
}

}  // namespace
