// The models folder and model names (see model_store.h).
#include "server/core/model_store.h"

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

std::string resolve_model_setting(const std::string& arg, std::string* error) {
  if (is_model_name(arg)) {
    std::string p = resolve_model_argument(arg);
    if (p.empty()) *error = "the model " + arg + " is a name, and there is no models folder (set XDG_DATA_HOME or HOME)";
    return p;
  }
  if (!arg.empty() && arg[0] == '/') return arg;
  if (arg.rfind("~/", 0) == 0) {
    const char* home = std::getenv("HOME");
    if (home && home[0] == '/') return (fs::path(home) / arg.substr(2)).string();
    *error = "the model path " + arg + " starts with ~/ and HOME is not set";
    return {};
  }
  *error = "the model path " + arg +
           " is relative: a setting names a model by its name (in the models folder) or by an absolute path";
  return {};
}

}  // namespace qf::server
