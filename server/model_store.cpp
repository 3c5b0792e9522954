// The models folder and model names (see model_store.h).
#include "server/model_store.h"

#include <cstdlib>
#include <filesystem>

namespace qf::server {

namespace fs = std::filesystem;

std::string models_dir() {
  if (const char* d = std::getenv("QUICKFILL_MODELS_DIR"); d && *d) return d;
  if (const char* x = std::getenv("XDG_DATA_HOME"); x && x[0] == '/') return (fs::path(x) / "quickfill" / "models").string();
  if (const char* h = std::getenv("HOME"); h && *h)
    return (fs::path(h) / ".local" / "share" / "quickfill" / "models").string();
  return {};
}

bool is_model_name(const std::string& name) {
  return !name.empty() && name != "." && name != ".." && name.find('/') == std::string::npos;
}

std::string resolve_model_argument(const std::string& arg) {
  if (!is_model_name(arg)) return arg;
  const std::string dir = models_dir();
  if (dir.empty()) return {};
  const bool has_ext = arg.size() > 5 && arg.compare(arg.size() - 5, 5, ".gguf") == 0;
  return (fs::path(dir) / (has_ext ? arg : arg + ".gguf")).string();
}

}  // namespace qf::server
