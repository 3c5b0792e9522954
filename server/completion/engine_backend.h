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

// Wraps a loaded model (shared by every sequence it creates).
std::unique_ptr<lm_backend> make_engine_backend(std::unique_ptr<qf::infer::model> m);

// Loads `path` and wraps it. Never throws: returns nullptr and sets *error to
// a message for the user (malformed GGUF, unsupported architecture, missing
// tensor, out of memory, ...).
std::unique_ptr<lm_backend> load_engine_backend(const std::string& path, int n_threads, const std::string& device,
                                                std::string* error);

}  // namespace qf::server::completion
