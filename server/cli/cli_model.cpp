// Shared helpers of the model-driving subcommands (see cli_model.h).
#include "server/cli/cli_model.h"

#include <cstdio>
#include <exception>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include "server/core/model_store.h"

namespace qf::cli {

std::unique_ptr<infer::model> load_model_or_report(const std::string& command, const std::string& path,
                                                   int n_threads, const std::string& device) {
  if (path.empty()) {
    std::fprintf(stderr, "%s: no model given (-m MODEL.gguf)\n", command.c_str());
    return nullptr;
  }
  // The engine logs through spdlog's default logger, which writes to stdout;
  // stdout belongs to the command's output, so send the log to stderr.
  static const bool logger_ready = [] {
    auto l = spdlog::stderr_color_mt("quickfill-cli");
    l->set_level(spdlog::default_logger()->level());
    spdlog::set_default_logger(l);
    return true;
  }();
  (void)logger_ready;
  try {
    infer::model_options o;
    o.n_threads = n_threads;
    o.device = device;
    // A pulled model's name too, looked up in the models folder only.
    const std::string file = server::resolve_model_argument(path);
    if (file.empty()) throw std::runtime_error("a model name, and no models folder (set XDG_DATA_HOME or HOME)");
    return infer::model::load(file, o);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: cannot load model %s: %s\n", command.c_str(), path.c_str(), e.what());
    return nullptr;
  }
}

bool read_text_file(const std::string& command, const std::string& path, std::string& out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    std::fprintf(stderr, "%s: cannot open %s\n", command.c_str(), path.c_str());
    return false;
  }
  std::ostringstream ss;
  ss << in.rdbuf();
  out = ss.str();
  return true;
}

}  // namespace qf::cli
