// lm_backend on top of the real inference engine (qf::infer::model, context,
// tokenizer). This is the only file of the pipeline that knows engine types.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "server/completion/api/lm.h"

namespace qf::infer {
class backend;
class model;
class tokenizer;
}

namespace qf::server::completion {

// The pipeline's view of an engine tokenizer (which must outlive it).
std::unique_ptr<lm_vocab> make_engine_vocab(const qf::infer::tokenizer& t);

// The engine's typed settings section: how the model is loaded and run.
// `device` is the "device" setting unless --device overrides it; `threads`
// comes from --threads; `step_graphs` is on unless QUICKFILL_STEP_GRAPHS=0 is
// in the server's environment (read once at start-up, server/core/settings.h).
struct engine_options {
  std::string device = "auto";  // auto | cpu | cuda
  int threads = 0;              // <= 0: pick from the machine
  bool step_graphs = true;      // replay recorded decode steps where the backend can (CUDA)
};

// Wraps a loaded model (shared by every sequence it creates); the sequences'
// contexts take `step_graphs` from it.
std::unique_ptr<lm_backend> make_engine_backend(std::unique_ptr<qf::infer::model> m, bool step_graphs);

// The device self-check at load (inference/model/device_check.h): a model
// that lands on a device backend (CUDA) is first run against the CPU on the
// same file, once per device, driver, binary and model (device_verdicts.h);
// on a mismatch, a device error or out-of-memory it is loaded on the CPU
// instead, and `notice` is told why in one message for the user.
struct device_check_policy {
  std::string verdicts_file = "default";  // "default": default_device_verdicts_file(); "": keep none
  // Makes the backend the model loads onto (tests inject a faulty device);
  // null: the device setting's backend, chosen by the engine.
  std::function<std::unique_ptr<qf::infer::backend>(const engine_options&)> make_backend;
  std::function<void(const std::string&)> notice;
};

// Loads `path` and wraps it. Never throws: returns nullptr and sets *error to
// a message for the user (malformed GGUF, unsupported architecture, missing
// tensor, out of memory, ...).
std::unique_ptr<lm_backend> load_engine_backend(const std::string& path, const engine_options& engine,
                                                std::string* error, const device_check_policy& checks = {});

}  // namespace qf::server::completion
