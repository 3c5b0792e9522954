// Chooses the backend named by model_options::device, falling back from
// "auto" to the CPU with a note that says why (see backend_select.h). The
// CUDA backend is a module loaded on first use (cuda/cuda_module.h): only
// when the CUDA driver loads, so that a machine without one never maps
// cudart or cuBLAS.
#include "inference/backend/backend_select.h"

#include "inference/core/errors.h"
#if defined(QUICKFILL_HAVE_CUDA)
#include <dlfcn.h>
#include <unistd.h>

#include <climits>
#include <mutex>
#include <vector>

#include "inference/backend/cuda/cuda_module.h"
#endif

namespace qf::infer {
namespace {

#if defined(QUICKFILL_HAVE_CUDA)
std::string executable_dir() {
  char buf[PATH_MAX];
  const ssize_t n = readlink("/proc/self/exe", buf, sizeof(buf) - 1);
  if (n <= 0) return {};
  std::string path(buf, static_cast<size_t>(n));
  const size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? std::string() : path.substr(0, slash);
}

// Where the module may be: next to the executable, in the installed layout
// (<prefix>/bin/quickfill, <prefix>/lib/quickfill/), and where this build
// put it (for the build tree's tests and tools).
std::vector<std::string> module_candidates() {
  std::vector<std::string> out;
  const std::string dir = executable_dir();
  if (!dir.empty()) {
    out.push_back(dir + "/" QUICKFILL_CUDA_MODULE_NAME);
    out.push_back(dir + "/../lib/quickfill/" QUICKFILL_CUDA_MODULE_NAME);
  }
#if defined(QUICKFILL_CUDA_MODULE_BUILD_PATH)
  out.push_back(QUICKFILL_CUDA_MODULE_BUILD_PATH);
#endif
  return out;
}

struct loaded_module {
  cuda_module_entry entry = nullptr;
  std::string why_not;
};

// Loads the driver and the module once per process.
const loaded_module& cuda_module() {
  static loaded_module m;
  static std::once_flag once;
  std::call_once(once, [] {
    if (!dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL)) {
      const char* err = dlerror();
      m.why_not = std::string("no CUDA driver found (") + (err ? err : "libcuda.so.1") + ")";
      return;
    }
    std::string tried;
    for (const std::string& path : module_candidates()) {
      if (access(path.c_str(), R_OK) != 0) continue;
      void* h = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
      if (!h) {
        const char* err = dlerror();
        m.why_not = "cannot load " + path + ": " + (err ? err : "dlopen failed");
        return;
      }
      m.entry = reinterpret_cast<cuda_module_entry>(dlsym(h, QUICKFILL_CUDA_MODULE_ENTRY));
      if (!m.entry) m.why_not = path + " has no " QUICKFILL_CUDA_MODULE_ENTRY;
      return;
    }
    for (const std::string& path : module_candidates()) tried += (tried.empty() ? "" : ", ") + path;
    m.why_not = "the CUDA backend module was not found (looked for " + tried + ")";
  });
  return m;
}
#endif

std::unique_ptr<backend> try_cuda(std::string* why_not) {
#if defined(QUICKFILL_HAVE_CUDA)
  const loaded_module& m = cuda_module();
  if (!m.entry) {
    if (why_not) *why_not = m.why_not;
    return nullptr;
  }
  return std::unique_ptr<backend>(m.entry(k_cuda_module_abi, why_not));
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
