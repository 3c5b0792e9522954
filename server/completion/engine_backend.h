// lm_backend on top of the real inference engine (qf::infer::model, context,
// tokenizer). This is the only file of the pipeline that knows engine types.
#pragma once

#include <memory>
#include <string>

#include "server/completion/lm.h"

namespace qf::infer {
class model;
class tokenizer;
}

namespace qf::server::completion {

// The pipeline's view of an engine tokenizer (which must outlive it).
std::unique_ptr<lm_vocab> make_engine_vocab(const qf::infer::tokenizer& t);

// The engine's typed settings section: how the model is loaded and run.
// `device` is the "device" setting unless --device overrides it; `threads`
// comes from --threads; `step_graphs` is on unless QUICKFILL_STEP_GRAPHS=0 is
// in the server's environment (read once at start-up, server/settings.h).
struct engine_options {
  std::string device = "auto";  // auto | cpu | cuda
  int threads = 0;              // <= 0: pick from the machine
  bool step_graphs = true;      // replay recorded decode steps where the backend can (CUDA)
};

// Wraps a loaded model (shared by every sequence it creates); the sequences'
// contexts take `step_graphs` from it.
std::unique_ptr<lm_backend> make_engine_backend(std::unique_ptr<qf::infer::model> m, bool step_graphs);

// Loads `path` and wraps it. Never throws: returns nullptr and sets *error to
// a message for the user (malformed GGUF, unsupported architecture, missing
// tensor, out of memory, ...).
std::unique_ptr<lm_backend> load_engine_backend(const std::string& path, const engine_options& engine,
                                                std::string* error);

}  // namespace qf::server::completion
