// Verdicts of the device self-check (inference/model/device_check.h), kept
// so that the check runs once per combination of what could change its
// outcome: the device and its driver (the backend's description), this
// binary (size and modification time of /proc/self/exe) and the model file
// (path, size, modification time). A new driver, a rebuilt quickfill or a
// replaced model file checks again.
//
// The verdicts are one JSON object in `<cache dir>/device-checks.json`
// (indexing/private_file.h: 0600, never through a symbolic link), keyed by
// those facts; `quickfill doctor` lists them.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace qf::server::completion {

struct device_verdict {
  bool passed = false;
  std::string failure;     // why not (empty when passed)
  double worst_nmse = 0;
  std::string device;      // the backend's description
  std::string model;       // the model file's path
  std::string checked_at;  // UTC, ISO 8601
};

// The key of a check of `model_path` on the backend described as `device`.
std::string device_check_key(const std::string& device, const std::string& model_path);

// `<default cache dir>/device-checks.json` ("" without a cache dir).
std::string default_device_verdicts_file();

std::optional<device_verdict> find_device_verdict(const std::string& file, const std::string& key);
// Records (or replaces) the verdict of `key`; false with *error when the file cannot be written.
bool record_device_verdict(const std::string& file, const std::string& key, const device_verdict& v,
                           std::string* error);
// Every verdict in the file, most recent first.
std::vector<std::pair<std::string, device_verdict>> all_device_verdicts(const std::string& file);

}  // namespace qf::server::completion
