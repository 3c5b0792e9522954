// Device discovery and CUDA error reporting. Having no device, no driver or
// a driver too old for this runtime all read as "no device" (count 0), so
// callers fall back to the CPU with a message instead of failing.
#include <cstdio>
#include <stdexcept>
#include <string>

#include "inference/backend/cuda/common.cuh"

namespace qf::infer::cuda {

int device_count() {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    (void)cudaGetLastError();  // clear the sticky error
    return 0;
  }
  return n;
}

const char* device_description() {
  static std::string desc = [] {
    if (device_count() == 0) return std::string("no CUDA device");
    cudaDeviceProp p{};
    if (cudaGetDeviceProperties(&p, 0) != cudaSuccess) return std::string("unknown CUDA device");
    int driver = 0;  // e.g. 13000 for 13.0; part of the description so that a
                     // new driver re-runs the device self-check (device_check.h)
    if (cudaDriverGetVersion(&driver) != cudaSuccess) driver = 0;
    char buf[700];  // the name is up to 256 bytes
    std::snprintf(buf, sizeof buf, "%s, sm_%d%d, %.0f GiB, driver %d.%d", p.name, p.major, p.minor,
                  double(p.totalGlobalMem) / (1024.0 * 1024.0 * 1024.0), driver / 1000, (driver % 1000) / 10);
    return std::string(buf);
  }();
  return desc.c_str();
}

void check(int err, const char* what) {
  if (err != cudaSuccess) {
    throw std::runtime_error(std::string("CUDA error in ") + what + ": " +
                             cudaGetErrorString(static_cast<cudaError_t>(err)));
  }
}

}  // namespace qf::infer::cuda
