// The daemon's shared engines: one completion provider (model, KV pool,
// caches) and one turn (engine_worker.h: its calls one at a time, in a fair
// order) per distinct model choice, shared by every session that asks for it.
//
// An engine is keyed by what the provider cannot change after it is made:
// the model path and the engine options (device, threads, step graphs). A
// session whose settings select another model gets (or shares) another
// engine; an engine is freed when its last session lets go of it (the session
// closed, or reloaded another model). The completion section of the settings
// is per session: before a session's call, its own completion settings are
// passed to the provider (configure) when they differ from the ones it last
// got, so sessions with equal settings (the usual case) never reconfigure.
//
// acquire() is what the daemon's sessions use as their provider_factory: it
// returns a session_provider, a completion_provider that makes every call
// into the engine under the engine's turn (engine_worker.h), on the calling
// session's own scheduler thread. The provider itself is made by the injected
// factory (make_completion_provider in the binary), under that turn, by the
// first session that asks for it; sessions asking for an engine that is
// loading wait for that load. Each session's buffers reach the provider under keys of
// their own (the URI qualified by the session: completion_request's
// buffer_key), so windows never share or evict each other's buffer state by
// URI; a session's document_closed (or its end) closes its own keys. The
// provider is told how many sessions share it (sessions_changed), which
// scales its per-session cache bounds.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "server/completion/pipeline/provider_factory.h"
#include "server/daemon/engine_worker.h"

namespace qf::server::daemon {

class engine_pool {
 public:
  using factory_fn = std::function<std::unique_ptr<completion_provider>(const provider_options&, std::string*)>;

  explicit engine_pool(factory_fn make);
  ~engine_pool();

  // A provider for `session` on the engine that `opts` selects, loading it
  // when no session has it; nullptr with *error when it cannot be loaded.
  std::unique_ptr<completion_provider> acquire(std::uint64_t session, const provider_options& opts,
                                               std::string* error);
  // Watches the turns of every engine made from now on (engine_worker's
  // observer: set it before the first acquire).
  void observe_turns(engine_worker::observer o) { observer_ = std::move(o); }
  std::size_t engines() const;  // engines alive now
  // How many sessions hold the engine `session` holds (itself included); 0
  // when it holds none (no model loaded, or loading).
  std::size_t sharing(std::uint64_t session) const;

  struct engine;  // engine_pool.cpp

 private:
  friend class session_provider;
  void release(const std::shared_ptr<engine>& e, std::uint64_t session);
  // Tells the engine's provider how many sessions share it (under its turn).
  void tell_sessions(const std::shared_ptr<engine>& e);

  factory_fn make_;
  engine_worker::observer observer_;
  mutable std::mutex mu_;
  std::map<std::string, std::shared_ptr<engine>> engines_;
};

std::string engine_key(const provider_options& opts);

}  // namespace qf::server::daemon
