// The daemon's shared engines and the per-session provider handle (see
// engine_pool.h).
#include "server/daemon/engine_pool.h"

#include <algorithm>
#include <atomic>
#include <span>
#include <vector>
#include <set>

#include <spdlog/spdlog.h>

#include "server/completion/decode/engine_backend.h"

namespace qf::server::daemon {

using completion::step_loop;
using completion::step_priority;

struct engine_pool::engine {
  std::string key;
  std::mutex load_mu;                     // held while loading; later acquirers wait on it
  std::multiset<std::uint64_t> sessions;  // one entry per provider handed out, under the pool's mutex
  bool ready = false;                     // a session's provider was made on it, under the pool's mutex
  std::atomic<int> distinct{0};           // distinct sessions in `sessions` (the budget's share)
  // Set once, under load_mu; the loop goes before the backend it runs.
  std::shared_ptr<completion::lm_backend> backend;
  std::unique_ptr<step_loop> loop;
  // Draft models by path, alive while a session's pipeline holds a view (draft_view below).
  std::mutex draft_load_mu;  // held while a draft model loads (not draft_mu: calls go on meanwhile)
  std::mutex draft_mu;
  std::map<std::string, std::weak_ptr<step_loop>> drafts;  // under draft_mu

  // Calls fn on every draft loop alive, under draft_mu.
  template <class F>
  void each_draft(F&& fn) {
    std::lock_guard<std::mutex> lock(draft_mu);
    for (auto& [path, w] : drafts)
      if (std::shared_ptr<step_loop> l = w.lock()) fn(*l);
  }
};

std::string engine_key(const provider_options& o) {
  return o.model_path + '\n' + o.engine.device + '\n' + std::to_string(o.engine.threads) + '\n' +
         (o.engine.step_graphs ? "graphs" : "no-graphs");
}

engine_loaders model_loaders() {
  engine_loaders l;
  l.load_backend = [](const provider_options& o, std::string* err) -> std::shared_ptr<completion::lm_backend> {
    return load_model_backend(o, err);
  };
  l.make_provider = [](std::unique_ptr<completion::lm_backend> view, const provider_options& o, std::string* err) {
    return make_pipeline_provider(std::move(view), o, err);
  };
  l.load_draft = [](const std::string& path, const provider_options& o,
                    std::string* err) -> std::shared_ptr<completion::lm_backend> {
    return completion::load_engine_backend(path, o.engine, err);
  };
  return l;
}

namespace {
// A session's view of a shared draft model: keeps the draft's step loop
// (and so its engine) alive while the session's pipeline uses it.
class draft_backend final : public completion::lm_backend {
 public:
  draft_backend(std::shared_ptr<step_loop> loop, std::uint64_t session)
      : loop_(std::move(loop)), view_(loop_->view(session)) {}
  const completion::lm_vocab& vocab() const override { return view_->vocab(); }
  std::unique_ptr<completion::lm_sequence> new_sequence(int64_t n_ctx) override { return view_->new_sequence(n_ctx); }
  size_t kv_bytes_per_token() const override { return view_->kv_bytes_per_token(); }
  size_t sequence_bytes(int64_t n_ctx) const override { return view_->sequence_bytes(n_ctx); }
  std::vector<std::unique_ptr<completion::lm_sequence>> fork(completion::lm_sequence& parent, int64_t n, int count,
                                                             int64_t more) override {
    return view_->fork(parent, n, count, more);
  }
  int64_t n_ctx_train() const override { return view_->n_ctx_train(); }
  std::string describe() const override { return view_->describe(); }
  void eval_batch(std::span<completion::lm_batch_entry> entries, completion::lm_output out) override {
    view_->eval_batch(entries, out);
  }
  completion::lm_load load() const override { return view_->load(); }

 private:
  std::shared_ptr<step_loop> loop_;  // declared first: the view goes before it
  std::unique_ptr<completion::lm_backend> view_;
};

// Distinct sessions holding an engine (a session may hold several providers); under the pool's mutex.
int distinct_sessions(const std::multiset<std::uint64_t>& sessions) {
  int n = 0;
  for (auto it = sessions.begin(); it != sessions.end(); it = sessions.upper_bound(*it)) ++n;
  return n;
}
}  // namespace

// One session's completion provider on a shared engine: the session's own
// pipeline over its view of the step loop. Its calls run on the session's
// scheduler thread, one at a time (so one priority per owner is enough), at
// once: only their evals wait, for the steps they join.
class session_provider final : public completion_provider {
 public:
  session_provider(engine_pool* pool, std::shared_ptr<engine_pool::engine> e, std::uint64_t session,
                   std::unique_ptr<completion_provider> inner)
      : pool_(pool), e_(std::move(e)), session_(session), inner_(std::move(inner)) {}

  ~session_provider() override {
    inner_.reset();  // the session's sequences go from the engine before the engine may go
    pool_->release(e_, session_);
  }

  // The request's deadline reaches its evals through the generator's token
  // (a share of the budget for the prompt, the whole of it for decoding): an
  // eval still waiting for a step then leaves, and the answer is empty and
  // incomplete at once.
  completion_result complete(const completion_request& req, const cancel_token& cancel) override {
    prepare(req.explicit_trigger ? step_priority::explicit_request : step_priority::keystroke);
    return inner_->complete(req, cancel);
  }
  bool background_step(const cancel_token& cancel) override {
    prepare(step_priority::background);
    return inner_->background_step(cancel);
  }
  std::optional<prompt_explanation> explain(const completion_request& req) override {
    return inner_->explain(req);  // no evaluation
  }
  std::optional<load_explanation> load_plan(const completion_request& req) override {
    return inner_->load_plan(req);  // an estimate from the shared engine's load (no evaluation)
  }
  next_edit_result next_edit(const next_edit_request& req, const cancel_token& cancel) override {
    prepare(step_priority::next_edit);
    return inner_->next_edit(req, cancel);
  }
  void document_closed(const std::string& uri) override { inner_->document_closed(uri); }
  void configure(const completion::completion_settings& s) override { inner_->configure(s); }
  std::string describe() const override { return inner_->describe(); }
  source_health health() const override { return inner_->health(); }

 private:
  // Before a call: its evals' priority, and the sessions sharing the budget.
  void prepare(step_priority p) {
    e_->loop->set_priority(session_, p);
    e_->each_draft([&](step_loop& l) { l.set_priority(session_, p); });
    const int n = std::max(1, e_->distinct.load());
    if (n != told_) {
      inner_->sessions_changed(n);
      told_ = n;
    }
  }

  engine_pool* pool_;
  std::shared_ptr<engine_pool::engine> e_;
  std::uint64_t session_;
  std::unique_ptr<completion_provider> inner_;
  int told_ = 0;  // the session count inner_ was last told
};

engine_pool::engine_pool(engine_loaders loaders, completion::step_loop_options steps)
    : loaders_(std::move(loaders)), steps_(steps) {}

engine_pool::~engine_pool() = default;

std::size_t engine_pool::engines() const {
  std::lock_guard<std::mutex> lock(mu_);
  return engines_.size();
}

std::size_t engine_pool::sharing(std::uint64_t session) const {
  std::lock_guard<std::mutex> lock(mu_);
  std::size_t n = 0;
  for (const auto& [key, e] : engines_)
    if (e->ready && e->sessions.count(session) != 0) n = std::max(n, static_cast<std::size_t>(e->distinct.load()));
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
    }
    e = slot;
    e->sessions.insert(session);
    e->distinct = distinct_sessions(e->sessions);
  }
  std::string err;
  bool loaded = false;
  {
    std::lock_guard<std::mutex> load(e->load_mu);
    if (!e->loop) {
      spdlog::info("daemon: loading an engine for {} (session {})", opts.model_path, session);
      try {
        if (loaders_.load_backend) e->backend = loaders_.load_backend(opts, &err);
        else err = "this build has no completion engine";
      } catch (const std::exception& ex) {
        err = ex.what();
      }
      if (e->backend) {
        e->loop = std::make_unique<step_loop>(e->backend, steps_);
        e->loop->set_observer(observer_);
      }
    } else {
      spdlog::info("daemon: session {} shares the loaded engine for {}", session, opts.model_path);
    }
    loaded = e->loop != nullptr;
  }
  std::unique_ptr<completion_provider> inner;
  if (loaded) {
    try {
      provider_options o = opts;
      o.load_draft = [this, e, session, opts](const std::string& path, std::string* error) {
        return draft_view(e, session, path, opts, error);
      };
      inner = loaders_.make_provider ? loaders_.make_provider(e->loop->view(session), o, &err) : nullptr;
    } catch (const std::exception& ex) {
      err = ex.what();
    }
  }
  if (!inner) {
    if (error) *error = err.empty() ? "the model could not be loaded" : err;
    release(e, session);
    return nullptr;
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    e->ready = true;
  }
  return std::make_unique<session_provider>(this, e, session, std::move(inner));
}

std::unique_ptr<completion::lm_backend> engine_pool::draft_view(const std::shared_ptr<engine>& e,
                                                                 std::uint64_t session, const std::string& path,
                                                                 const provider_options& opts, std::string* error) {
  std::shared_ptr<step_loop> loop;
  {
    std::lock_guard<std::mutex> loading(e->draft_load_mu);
    {
      std::lock_guard<std::mutex> lock(e->draft_mu);
      loop = e->drafts[path].lock();
    }
    if (!loop) {
      std::string err;
      std::shared_ptr<completion::lm_backend> b;
      try {
        if (loaders_.load_draft) b = loaders_.load_draft(path, opts, &err);
        else err = "this build loads no draft models";
      } catch (const std::exception& ex) {
        err = ex.what();
      }
      if (!b) {
        if (error) *error = err.empty() ? "the draft model could not be loaded" : err;
        return nullptr;
      }
      loop = std::make_shared<step_loop>(std::move(b), steps_);
      std::lock_guard<std::mutex> lock(e->draft_mu);
      e->drafts[path] = loop;
      spdlog::info("daemon: draft model {} loaded (session {})", path, session);
    } else {
      spdlog::info("daemon: session {} shares the loaded draft model {}", session, path);
    }
  }
  return std::make_unique<draft_backend>(std::move(loop), session);
}

void engine_pool::release(const std::shared_ptr<engine>& e, std::uint64_t session) {
  bool last = false, session_left = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (auto it = e->sessions.find(session); it != e->sessions.end()) e->sessions.erase(it);
    session_left = e->sessions.count(session) == 0;
    e->distinct = distinct_sessions(e->sessions);
    last = e->sessions.empty();
    if (last) {
      auto it = engines_.find(e->key);
      if (it != engines_.end() && it->second == e) engines_.erase(it);
    }
  }
  if (session_left) {
    {
      std::lock_guard<std::mutex> load(e->load_mu);
      if (e->loop) e->loop->forget(session);
    }
    e->each_draft([&](step_loop& l) { l.forget(session); });
  }
  // The model goes with the last handle on the engine (the caller's).
  if (last) spdlog::info("daemon: engine freed ({})", e->key.substr(0, e->key.find('\n')));
}

}  // namespace qf::server::daemon
