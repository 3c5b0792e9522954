// Creates the model-backed completion provider (the pipeline of prompts,
// prefix cache, scheduling and post-processing on top of the inference
// engine). The server calls this once at start-up (and again when the model
// setting changes) from the inference worker thread.
//
// In two parts, which make_completion_provider runs one after the other (the
// in-process server): load_model_backend loads the model (with the device
// self-check), and make_pipeline_provider makes a pipeline on a backend (the
// model's calibrated gate, the draft model's loader, the model's name). The
// daemon loads one backend per model and makes one pipeline per session on
// it, each over its session's view of the shared engine (step_loop.h).
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "server/completion/api/completion_provider.h"
#include "server/completion/decode/engine_backend.h"
#include "server/completion/api/settings.h"

namespace qf::server {

struct provider_options {
  std::string model_path;
  completion::completion_settings completion;  // the pipeline's section of the settings
  completion::engine_options engine;           // device, threads, step graphs
  // What a model argument means (a pulled model's name -> its file in the
  // models folder, server/core/model_store.h); used for the draft model, which the
  // pipeline may load again when the setting changes. It must give an
  // absolute path ("" refuses); unset, only an absolute path is loaded,
  // never a name or a path relative to the working directory.
  std::function<std::string(const std::string&)> resolve_model;
  // Loads a draft model's file (an absolute path, resolved as above); unset:
  // load_engine_backend with `engine`. The daemon gives each session's
  // pipeline a view of one draft engine shared by the sessions.
  std::function<std::unique_ptr<completion::lm_backend>(const std::string& path, std::string* error)> load_draft;
  // Progress while loading (0..100 and a message), for $/progress.
  std::function<void(int percent, const std::string& message)> on_progress;
  // One message for the user about the load (the device self-check fell back
  // to the CPU: engine_backend.h), for window/showMessage.
  std::function<void(const std::string& message)> on_notice;
};

// Returns nullptr and sets *error (a message fit for the user) on failure:
// unreadable or malformed GGUF, unsupported architecture, out of memory.
std::unique_ptr<completion_provider> make_completion_provider(const provider_options& opts,
                                                              std::string* error);

// The first part: the model of opts.model_path on opts.engine, progress 0-80
// and the device notice reported; nullptr with *error on failure.
std::unique_ptr<completion::lm_backend> load_model_backend(const provider_options& opts, std::string* error);
// The second part: the pipeline on `backend` (opts.model_path names the
// model: its gate file and name; opts.completion its settings), progress
// 80-100 (the draft model loaded when configured); nullptr with *error on
// failure (out of memory).
std::unique_ptr<completion_provider> make_pipeline_provider(std::unique_ptr<completion::lm_backend> backend,
                                                            const provider_options& opts, std::string* error);

}  // namespace qf::server
