// The daemon's shared engines: one loaded model (an lm_backend) and one step
// loop over it (step_loop.h: continuous batching) per distinct model choice,
// shared by every session that asks for it.
//
// An engine is keyed by what cannot change without loading the model again:
// the model path and the engine options (device, threads, step graphs). A
// session whose settings select another model gets (or shares) another
// engine; an engine is freed when its last session lets go of it (the session
// closed, or reloaded another model).
//
// acquire() is what the daemon's sessions use as their provider_factory: it
// returns a session_provider, which holds the session's OWN completion
// provider (a pipeline: documents, prompt layouts, KV slots, caches, the
// session's completion settings) made by the injected make_provider on the
// session's view of the engine (step_loop::view(session)). So sessions' calls
// run at once, each on its own session's scheduler thread; only their evals
// meet, in the step loop's shared steps (one engine batch of every session's
// next rows). Before each call the session provider sets the priority of its
// evals (an automatic completion: keystroke; an explicit one: explicit
// request; next edit; background work: background) and tells its pipeline
// how many sessions share the engine, whose KV memory budget
// (completion.cacheMiB) the sessions' pools share (kv_pool::set_sessions).
//
// The backend is loaded by the injected load_backend (load_model_backend in
// the binary) by the first session that asks for it, under the engine's load
// mutex; sessions asking for an engine that is loading wait for that load.
// A session's end forgets its owner in the step loop. A draft model
// (completion.draftModel) is shared the same way: one engine and step loop
// per engine and draft path, for as long as a session's pipeline uses it.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "server/completion/api/lm.h"
#include "server/completion/decode/step_loop.h"
#include "server/completion/pipeline/provider_factory.h"

namespace qf::server::daemon {

// How the pool makes an engine and a session's provider on it (the binary:
// load_model_backend and make_pipeline_provider; tests inject a scripted
// model). Either returns nullptr with *error on failure.
struct engine_loaders {
  std::function<std::shared_ptr<completion::lm_backend>(const provider_options&, std::string* error)> load_backend;
  std::function<std::unique_ptr<completion_provider>(std::unique_ptr<completion::lm_backend> view,
                                                     const provider_options&, std::string* error)>
      make_provider;
  // A draft model (completion.draftModel, an absolute path): loaded once per
  // engine and path, while any session's pipeline uses it, and run by a step
  // loop of its own; each session's pipeline gets a view of it.
  std::function<std::shared_ptr<completion::lm_backend>(const std::string& path, const provider_options&,
                                                        std::string* error)>
      load_draft;
};
// The model's: load_model_backend, make_pipeline_provider, load_engine_backend.
engine_loaders model_loaders();

class engine_pool {
 public:
  explicit engine_pool(engine_loaders loaders, completion::step_loop_options steps = {});
  ~engine_pool();

  // A provider for `session` on the engine that `opts` selects, loading it
  // when no session has it; nullptr with *error when it cannot be loaded.
  std::unique_ptr<completion_provider> acquire(std::uint64_t session, const provider_options& opts,
                                               std::string* error);
  // Watches the steps of every engine made from now on (step_loop's
  // observer: set it before the first acquire).
  void observe_steps(completion::step_loop::step_observer o) { observer_ = std::move(o); }
  std::size_t engines() const;  // engines alive now
  // How many sessions hold the engine `session` holds (itself included); 0
  // when it holds none (no model loaded, or loading).
  std::size_t sharing(std::uint64_t session) const;

  struct engine;  // engine_pool.cpp

 private:
  friend class session_provider;
  void release(const std::shared_ptr<engine>& e, std::uint64_t session);
  // `session`'s view of the draft model at `path` on `e` (loaded when no
  // session uses it); nullptr with *error when it cannot be loaded.
  std::unique_ptr<completion::lm_backend> draft_view(const std::shared_ptr<engine>& e, std::uint64_t session,
                                                     const std::string& path, const provider_options& opts,
                                                     std::string* error);

  engine_loaders loaders_;
  completion::step_loop_options steps_;
  completion::step_loop::step_observer observer_;
  mutable std::mutex mu_;
  std::map<std::string, std::shared_ptr<engine>> engines_;
};

std::string engine_key(const provider_options& opts);

}  // namespace qf::server::daemon
