// Helpers shared by the model-driving subcommands (run, perplexity, bench):
// loading a model with a one-line error, the prompt tokens of a text, and a
// monotonic clock.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "inference/model/model.h"

namespace qf::cli {

// Loads `path`; on failure prints "<command>: cannot load model PATH: why" to
// stderr and returns null.
std::unique_ptr<infer::model> load_model_or_report(const std::string& command, const std::string& path,
                                                   int n_threads, const std::string& device);

// Reads a whole file; false (and a message on stderr) on failure.
bool read_text_file(const std::string& command, const std::string& path, std::string& out);

inline double now_seconds() {
  using clk = std::chrono::steady_clock;
  return std::chrono::duration<double>(clk::now().time_since_epoch()).count();
}

}  // namespace qf::cli
