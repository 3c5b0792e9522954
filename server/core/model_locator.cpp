// Model path resolution (see model_locator.h).
#include "server/core/model_locator.h"

#include <unistd.h>

#include <filesystem>
#include <system_error>

#include "server/core/model_store.h"

namespace qf::server {

namespace fs = std::filesystem;

std::string executable_dir() {
  std::error_code ec;
  fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (ec) return {};
  return exe.parent_path().string();
}

model_choice choose_model(const std::string& cli_path, const std::string& setting_path) {
  model_choice c;
  if (!cli_path.empty()) {
    c.path = resolve_model_argument(cli_path);
    c.source = "--model";
    return c;
  }
  if (!setting_path.empty()) {
    c.path = resolve_model_setting(setting_path, &c.error);
    c.source = "setting";
    return c;
  }
  c.source = "default";
  std::vector<fs::path> candidates;
  std::string dir = executable_dir();
  if (!dir.empty()) candidates.push_back(fs::path(dir) / ".." / "share" / "quickfill" / "models" / default_model_name);
#ifdef QUICKFILL_SOURCE_DIR
  candidates.push_back(fs::path(QUICKFILL_SOURCE_DIR) / "models" / default_model_name);
#endif
  for (const auto& p : candidates) {
    std::error_code ec;
    fs::path norm = p.lexically_normal();
    c.searched.push_back(norm.string());
    if (fs::is_regular_file(norm, ec)) {
      c.path = norm.string();
      return c;
    }
  }
  return c;
}

}  // namespace qf::server
