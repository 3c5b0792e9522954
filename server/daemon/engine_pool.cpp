// The daemon's shared engines and the per-session provider handle (see
// engine_pool.h).
#include "server/daemon/engine_pool.h"

#include <algorithm>
#include <optional>
#include <set>

#include <spdlog/spdlog.h>

#include "server/daemon/engine_worker.h"

namespace qf::server::daemon {

struct engine_pool::engine {
  std::string key;
  std::mutex load_mu;  // held while loading; later acquirers wait on it
  std::multiset<std::uint64_t> sessions;  // one entry per provider handed out, under the pool's mutex
  bool provider_ready = false;            // a load succeeded, under the pool's mutex
  engine_worker worker;
  // Touched only by the call holding the engine's turn (worker.run):
  std::unique_ptr<completion_provider> provider;
  std::string description;
  std::optional<completion::completion_settings> applied;
};

std::string engine_key(const provider_options& o) {
  return o.model_path + '\n' + o.engine.device + '\n' + std::to_string(o.engine.threads) + '\n' +
         (o.engine.step_graphs ? "graphs" : "no-graphs");
}

namespace {
const cancel_token& never() {
  static const cancel_source src;
  static const cancel_token t = src.token();
  return t;
}

// Distinct sessions holding `e` (a session may hold several providers); under the pool's mutex.
int distinct_sessions(const std::multiset<std::uint64_t>& sessions) {
  int n = 0;
  for (auto it = sessions.begin(); it != sessions.end(); it = sessions.upper_bound(*it)) ++n;
  return n;
}
}  // namespace

// One session's view of a shared engine: every call runs under the
// engine's turn, with this session's completion settings applied first.
// The session's buffers get cache keys of their own (buffer_key): two windows
// with the same URI open hold two buffers, which must not share a KV slot,
// a prompt layout or a type-through suggestion.
class session_provider final : public completion_provider {
 public:
  session_provider(engine_pool* pool, std::shared_ptr<engine_pool::engine> e, std::uint64_t session,
                   completion::completion_settings settings)
      : pool_(pool), e_(std::move(e)), session_(session), settings_(std::move(settings)) {}

  ~session_provider() override {
    try {
      e_->worker.run(session_, engine_worker::kind::foreground, never(), [this](const cancel_token&) {
        if (e_->provider)
          for (const std::string& uri : used_) e_->provider->document_closed(key_of(uri));
        used_.clear();
      });
    } catch (const std::exception& ex) {
      spdlog::warn("daemon: closing a session's documents: {}", ex.what());
    }
    pool_->release(e_, session_);
  }

  completion_result complete(const completion_request& req, const cancel_token& cancel) override {
    completion_result r;
    completion_request keyed = req;
    keyed.buffer_key = key_of(req.uri);
    // The request's deadline counts while the call waits behind other
    // windows' calls: past it, the call leaves the queue and the answer is an
    // empty, incomplete list at once (the client asks again), as in-process
    // where nothing waits. Once running, the pipeline keeps the deadline itself.
    const bool timed = req.deadline.time_since_epoch().count() != 0;
    const cancel_token waiting = timed ? cancel.with_deadline(req.deadline) : cancel;
    const bool ran = run(engine_worker::kind::foreground, waiting, req.uri,
                         [&](completion_provider& p, const cancel_token& t) { r = p.complete(keyed, t); });
    if (!ran && !cancel.is_cancelled()) r.incomplete = true;
    return r;
  }
  bool background_step(const cancel_token& cancel) override {
    bool more = false;
    const bool ran = run(engine_worker::kind::background, cancel, {},
                         [&](completion_provider& p, const cancel_token& t) { more = p.background_step(t); });
    return ran ? more : !cancel.is_cancelled();
  }
  std::optional<prompt_explanation> explain(const completion_request& req) override {
    std::optional<prompt_explanation> r;
    completion_request keyed = req;
    keyed.buffer_key = key_of(req.uri);
    run(engine_worker::kind::foreground, never(), req.uri,
        [&](completion_provider& p, const cancel_token&) { r = p.explain(keyed); });
    return r;
  }
  next_edit_result next_edit(const next_edit_request& req, const cancel_token& cancel) override {
    next_edit_result r;
    next_edit_request keyed = req;
    keyed.buffer_key = key_of(req.uri);
    run(engine_worker::kind::foreground, cancel, req.uri,
        [&](completion_provider& p, const cancel_token& t) { r = p.next_edit(keyed, t); });
    return r;
  }
  void document_closed(const std::string& uri) override {
    e_->worker.run(session_, engine_worker::kind::foreground, never(), [&](const cancel_token&) {
      if (used_.erase(uri) != 0 && e_->provider) e_->provider->document_closed(key_of(uri));
    });
  }
  void configure(const completion::completion_settings& s) override { settings_ = s; }
  std::string describe() const override { return e_->description; }
  source_health health() const override {
    source_health h;
    e_->worker.run(session_, engine_worker::kind::foreground, never(), [&](const cancel_token&) {
      if (e_->provider) h = e_->provider->health();
    });
    return h;
  }

 private:
  template <class F>
  bool run(engine_worker::kind k, const cancel_token& cancel, const std::string& uri, F&& fn) {
    return e_->worker.run(session_, k, cancel, [&](const cancel_token& t) {
      completion_provider* p = e_->provider.get();
      if (!p) return;
      if (!e_->applied || !(*e_->applied == settings_)) {
        p->configure(settings_);
        e_->applied = settings_;
      }
      if (!uri.empty()) used_.insert(uri);
      fn(*p, t);
    });
  }

  // This session's key for a buffer it holds (completion_request::buffer_key).
  std::string key_of(const std::string& uri) const { return uri + "#session-" + std::to_string(session_); }

  engine_pool* pool_;
  std::shared_ptr<engine_pool::engine> e_;
  std::uint64_t session_;
  completion::completion_settings settings_;
  std::set<std::string> used_;  // URIs this session sent requests on; under the engine's turn only
};

engine_pool::engine_pool(factory_fn make) : make_(std::move(make)) {}

engine_pool::~engine_pool() = default;

std::size_t engine_pool::engines() const {
  std::lock_guard<std::mutex> lock(mu_);
  return engines_.size();
}

std::size_t engine_pool::sharing(std::uint64_t session) const {
  std::lock_guard<std::mutex> lock(mu_);
  std::size_t n = 0;
  for (const auto& [key, e] : engines_)
    if (e->provider_ready && e->sessions.count(session) != 0) {
      std::set<std::uint64_t> distinct(e->sessions.begin(), e->sessions.end());
      n = std::max(n, distinct.size());
    }
  return n;
}

std::unique_ptr<completion_provider> engine_pool::acquire(std::uint64_t session, const provider_options& opts,
                                                          std::string* error) {
  const std::string key = engine_key(opts);
  std::shared_ptr<engine> e;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto& slot = engines_[key];
    if (!slot) {
      slot = std::make_shared<engine>();
      slot->key = key;
      slot->worker.set_observer(observer_);
    }
    e = slot;
    e->sessions.insert(session);
  }
  bool loaded = false;
  {
    std::lock_guard<std::mutex> load(e->load_mu);
    std::string err;
    e->worker.run(session, engine_worker::kind::foreground, never(), [&](const cancel_token&) {
      if (!e->provider) {
        spdlog::info("daemon: loading an engine for {} (session {})", opts.model_path, session);
        try {
          e->provider = make_ ? make_(opts, &err) : nullptr;
          if (!make_) err = "this build has no completion engine";
        } catch (const std::exception& ex) {
          err = ex.what();
        }
        if (e->provider) {
          e->description = e->provider->describe();
          e->applied = opts.completion;
        }
      } else {
        spdlog::info("daemon: session {} shares the loaded engine for {}", session, opts.model_path);
      }
      loaded = e->provider != nullptr;
    });
    if (!loaded && error) *error = err.empty() ? "the model could not be loaded" : err;
  }
  if (!loaded) {
    release(e, session);
    return nullptr;
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    e->provider_ready = true;
  }
  tell_sessions(e);
  return std::make_unique<session_provider>(this, e, session, opts.completion);
}

void engine_pool::tell_sessions(const std::shared_ptr<engine>& e) {
  e->worker.run(0, engine_worker::kind::foreground, never(), [&](const cancel_token&) {
    int n = 0;
    {
      std::lock_guard<std::mutex> lock(mu_);
      n = distinct_sessions(e->sessions);
    }
    if (e->provider && n > 0) e->provider->sessions_changed(n);
  });
}

void engine_pool::release(const std::shared_ptr<engine>& e, std::uint64_t session) {
  bool last = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (auto it = e->sessions.find(session); it != e->sessions.end()) e->sessions.erase(it);
    last = e->sessions.empty();
    if (last) {
      auto it = engines_.find(e->key);
      if (it != engines_.end() && it->second == e) engines_.erase(it);
    }
  }
  if (!last) {
    tell_sessions(e);
    return;
  }
  // The last user: the model and its caches go, under the engine's turn.
  e->worker.run(0, engine_worker::kind::foreground, never(), [&](const cancel_token&) { e->provider.reset(); });
  e->worker.stop();
  spdlog::info("daemon: engine freed ({})", e->key.substr(0, e->key.find('\n')));
}

}  // namespace qf::server::daemon
