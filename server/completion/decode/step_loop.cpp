// step_loop (see the header): views whose evals queue, and the group-commit
// leader that runs each step as one engine batch.
//
// Every field of the loop and of the waiting entries is guarded by mu_; the
// leader reads its step's entries under the lock, runs the engine without
// it (stepping_ keeps every other engine call out), and writes the results
// back under it. A sequence's host state (tokens, outputs) is read without
// the lock by its own thread only, which is not in a step at the time, and
// by adopt_prefix, between steps (when nothing can change it).
#include "server/completion/decode/step_loop.h"

#include <algorithm>
#include <chrono>
#include <exception>
#include <stdexcept>
#include <utility>

namespace qf::server::completion {

const char* to_string(step_priority p) {
  switch (p) {
    case step_priority::keystroke: return "keystroke";
    case step_priority::explicit_request: return "explicit_request";
    case step_priority::next_edit: return "next_edit";
    case step_priority::background: return "background";
  }
  return "keystroke";
}

namespace {
// How often a thread waiting in the queue reads its cancel tokens (tokens
// have no way to wake a waiter).
constexpr auto k_cancel_poll = std::chrono::milliseconds(2);
// Weight of the newest step in the moving averages.
constexpr double k_average_weight = 0.2;
}  // namespace

struct step_loop::entry {
  std::uint64_t owner = 0;
  step_priority priority = step_priority::keystroke;
  std::uint64_t arrival = 0;
  lm_sequence* seq = nullptr;     // the engine's
  std::span<const int32_t> rest;  // tokens not yet run
  lm_logits mode = lm_logits::last;
  cancel_token cancel{};
  lm_output out = lm_output::best;
  lm_eval_result result{};  // accumulated over its chunks
  bool running = false;  // in the step under way
  bool done = false;
  std::exception_ptr error;
};

template <class F>
auto step_loop::between_steps(F&& fn) -> decltype(fn()) {
  std::unique_lock<std::mutex> lock(mu_);
  ++between_waiting_;
  cv_.wait(lock, [&] { return !stepping_; });
  --between_waiting_;
  stepping_ = true;
  lock.unlock();
  struct release {
    step_loop& loop;
    ~release() {
      {
        std::lock_guard<std::mutex> l(loop.mu_);
        loop.stepping_ = false;
      }
      loop.cv_.notify_all();
    }
  } r{*this};
  return fn();
}

// ---- views ------------------------------------------------------------------

class step_loop::view_sequence final : public lm_sequence {
 public:
  view_sequence(step_loop& loop, std::uint64_t owner, std::unique_ptr<lm_sequence> inner)
      : loop_(loop), owner_(owner), inner_(std::move(inner)) {
    std::lock_guard<std::mutex> lock(loop_.mu_);
    loop_.live_.insert(inner_.get());
  }
  // The engine's sequence goes between steps: forks of one pool give their
  // cells back into it, which a step may be drawing from; and another
  // owner's adopt_prefix may be reading it (it leaves the live set first).
  ~view_sequence() override {
    loop_.between_steps([&] {
      {
        std::lock_guard<std::mutex> lock(loop_.mu_);
        loop_.live_.erase(inner_.get());
      }
      inner_.reset();
      return 0;
    });
  }
  int64_t n_ctx() const override { return inner_->n_ctx(); }
  const std::vector<int32_t>& tokens() const override { return inner_->tokens(); }
  void keep_first(int64_t n) override {
    loop_.between_steps([&] {
      inner_->keep_first(n);
      return 0;
    });
  }
  void move_range(int64_t b, int64_t e, int64_t d) override {
    loop_.between_steps([&] {
      inner_->move_range(b, e, d);
      return 0;
    });
  }
  lm_eval_result eval(std::span<const int32_t> toks, lm_logits mode, const cancel_token& cancel,
                      lm_output out) override {
    return loop_.submit(owner_, *inner_, toks, mode, cancel, out);
  }
  int32_t best_token(int64_t i) const override { return inner_->best_token(i); }
  float best_logprob(int64_t i) const override { return inner_->best_logprob(i); }
  std::span<const float> logits(int64_t i) const override { return inner_->logits(i); }
  size_t kv_bytes() const override { return inner_->kv_bytes(); }
  void copy_prefix(const lm_sequence& src, int64_t n) override {
    const lm_sequence& from = unwrap(src);
    loop_.between_steps([&] {
      inner_->copy_prefix(from, n);
      return 0;
    });
  }

  lm_sequence& inner() { return *inner_; }
  const step_loop& loop() const { return loop_; }
  // The engine's sequence under a view of this loop, else `s` itself.
  static const lm_sequence& unwrap(const lm_sequence& s) {
    const auto* v = dynamic_cast<const view_sequence*>(&s);
    return v ? *v->inner_ : s;
  }

 private:
  step_loop& loop_;
  std::uint64_t owner_;
  std::unique_ptr<lm_sequence> inner_;
};

class step_loop::view_backend final : public lm_backend {
 public:
  view_backend(step_loop& loop, std::uint64_t owner) : loop_(loop), owner_(owner) {}
  const lm_vocab& vocab() const override { return loop_.engine_->vocab(); }
  std::unique_ptr<lm_sequence> new_sequence(int64_t n_ctx) override {
    // The wrapper is made between steps too: if making it throws, the
    // engine's sequence goes there.
    return loop_.between_steps([&]() -> std::unique_ptr<lm_sequence> {
      return std::make_unique<view_sequence>(loop_, owner_, loop_.engine_->new_sequence(n_ctx));
    });
  }
  size_t kv_bytes_per_token() const override { return loop_.engine_->kv_bytes_per_token(); }
  size_t sequence_bytes(int64_t n_ctx) const override { return loop_.engine_->sequence_bytes(n_ctx); }
  std::vector<std::unique_ptr<lm_sequence>> fork(lm_sequence& parent, int64_t n, int count, int64_t more) override {
    auto* p = dynamic_cast<view_sequence*>(&parent);
    if (!p || &p->loop() != &loop_) return {};  // not a sequence of this loop: the caller copies
    // The wrappers are made between steps: if making one throws, the
    // engine's forks not yet wrapped go there (those wrapped go after, each
    // between steps of its own, as any view sequence).
    std::vector<std::unique_ptr<lm_sequence>> out;
    loop_.between_steps([&] {
      auto inner = loop_.engine_->fork(p->inner(), n, count, more);
      out.reserve(inner.size());  // push_back below does not throw
      for (auto& s : inner) out.push_back(std::make_unique<view_sequence>(loop_, owner_, std::move(s)));
      return 0;
    });
    return out;
  }
  int64_t n_ctx_train() const override { return loop_.engine_->n_ctx_train(); }
  std::string describe() const override { return loop_.engine_->describe(); }
  // All the entries join the queue at once, so they share a step (n
  // candidates of an eval_group decode side by side).
  void eval_batch(std::span<lm_batch_entry> entries, lm_output out) override {
    std::vector<lm_batch_entry> inner(entries.begin(), entries.end());
    for (lm_batch_entry& e : inner) {
      auto* v = dynamic_cast<view_sequence*>(e.seq);
      if (!v || &v->loop() != &loop_)
        throw std::logic_error("step_loop: eval_batch of a sequence that is not one of this loop's views");
      e.seq = &v->inner();
    }
    loop_.submit_all(owner_, inner, out);
    for (size_t i = 0; i < entries.size(); ++i) entries[i].result = inner[i].result;
  }
  lm_load load() const override { return loop_.load(owner_); }
  int64_t adopt_prefix(lm_sequence& dst, std::span<const int32_t> prompt, int64_t min_tokens) override {
    auto* v = dynamic_cast<view_sequence*>(&dst);
    if (!v || &v->loop() != &loop_) return 0;  // not a sequence of this loop
    return loop_.adopt_prefix(v->inner(), prompt, min_tokens);
  }

 private:
  step_loop& loop_;
  std::uint64_t owner_;
};

// ---- the loop -----------------------------------------------------------------

step_loop::step_loop(std::shared_ptr<lm_backend> engine, step_loop_options o) : engine_(std::move(engine)), opts_(o) {
  if (!engine_) throw std::invalid_argument("step_loop: no engine");
  opts_.decode_rows = std::max<int64_t>(1, opts_.decode_rows);
  opts_.prefill_rows = std::max<int64_t>(1, opts_.prefill_rows);
}

step_loop::~step_loop() = default;

std::unique_ptr<lm_backend> step_loop::view(std::uint64_t owner) { return std::make_unique<view_backend>(*this, owner); }

void step_loop::set_priority(std::uint64_t owner, step_priority p) {
  std::lock_guard<std::mutex> lock(mu_);
  priority_[owner] = p;
}

void step_loop::forget(std::uint64_t owner) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    priority_.erase(owner);
    last_served_.erase(owner);
    rejoining_.erase(owner);
    late_.erase(owner);
  }
  cv_.notify_all();
}

int64_t step_loop::steps() const {
  std::lock_guard<std::mutex> lock(mu_);
  return steps_;
}

lm_load step_loop::load(std::uint64_t owner) const {
  std::lock_guard<std::mutex> lock(mu_);
  lm_load l;
  const auto pr = priority_.find(owner);
  const step_priority mine = pr == priority_.end() ? step_priority::keystroke : pr->second;
  for (const entry* e : waiting_) {
    if (e->owner == owner) continue;
    ++l.sequences;
    if (e->priority != step_priority::background) ++l.foreground;
    // What the owner's next eval waits for: the prompt rows queued before it
    // in the order (decode entries ride in its step; lower priorities and
    // the step under way do not hold it back).
    const auto n = static_cast<int64_t>(e->rest.size());
    if (!e->running && n > opts_.decode_rows && e->priority <= mine) l.rows_waiting += n;
  }
  l.ms_per_step = ms_per_step_;
  l.ms_per_row = ms_per_row_;
  return l;
}

int64_t step_loop::adopt_prefix(lm_sequence& dst, std::span<const int32_t> prompt, int64_t min_tokens) {
  auto shared = [&](const lm_sequence& s) { return common_prefix(s.tokens(), prompt); };
  return between_steps([&]() -> int64_t {
    // No step runs and no other engine call: every live sequence's tokens
    // and cells hold still, and none of them goes before this returns (a
    // view sequence leaves the live set between steps).
    std::vector<const lm_sequence*> others;
    {
      std::lock_guard<std::mutex> lock(mu_);
      others.reserve(live_.size());
      for (const lm_sequence* s : live_)
        if (s != &dst) others.push_back(s);
    }
    const lm_sequence* from = nullptr;
    int64_t best = std::max(shared(dst), min_tokens - 1);
    for (const lm_sequence* s : others)
      if (const int64_t n = shared(*s); n > best) {
        from = s;
        best = n;
      }
    if (!from) return 0;
    dst.copy_prefix(*from, best);
    return best;
  });
}

lm_eval_result step_loop::submit(std::uint64_t owner, lm_sequence& seq, std::span<const int32_t> toks, lm_logits mode,
                                 const cancel_token& cancel, lm_output out) {
  lm_batch_entry e;
  e.seq = &seq;
  e.toks = toks;
  e.mode = mode;
  e.cancel = cancel;
  submit_all(owner, std::span<lm_batch_entry>(&e, 1), out);
  return e.result;
}

void step_loop::submit_all(std::uint64_t owner, std::span<lm_batch_entry> entries, lm_output out) {
  std::vector<entry> mine(entries.size());
  std::vector<size_t> queued;  // entries that go through the queue
  for (size_t i = 0; i < entries.size(); ++i) {
    const lm_batch_entry& b = entries[i];
    if (b.toks.empty()) {
      // Nothing to run: what the sequence's own eval does with no tokens (it
      // may reset its outputs), between steps.
      entries[i].result = between_steps([&] { return b.seq->eval(b.toks, b.mode, b.cancel, out); });
      continue;
    }
    queued.push_back(i);
  }
  if (queued.empty()) return;
  std::unique_lock<std::mutex> lock(mu_);
  const auto pr = priority_.find(owner);
  const step_priority priority = pr == priority_.end() ? step_priority::keystroke : pr->second;
  size_t pushed = 0;
  try {
    for (size_t i : queued) {
      entry& q = mine[i];
      q.owner = owner;
      q.priority = priority;
      q.arrival = arrivals_++;
      q.seq = entries[i].seq;
      q.rest = entries[i].toks;
      q.mode = entries[i].mode;
      q.cancel = entries[i].cancel;
      q.out = out;
      waiting_.push_back(&q);
      ++pushed;
    }
  } catch (...) {  // none of this call's entries stays queued (they live on this stack)
    for (size_t k = 0; k < pushed; ++k) waiting_.erase(std::find(waiting_.begin(), waiting_.end(), &mine[queued[k]]));
    throw;
  }
  // Queued in time after its last window: it is waited for again.
  if (auto l = late_.find(owner); l != late_.end() && std::chrono::steady_clock::now() <= l->second) late_.erase(l);
  if (auto r = rejoining_.find(owner); r != rejoining_.end()) {
    r->second -= static_cast<int>(queued.size());
    if (r->second <= 0) rejoining_.erase(r);
  }
  cv_.notify_all();  // a thread waiting for this owner to rejoin may lead now
  auto all_done = [&] {
    for (size_t i : queued)
      if (!mine[i].done) return false;
    return true;
  };
  while (!all_done()) {
    // Only entries still queued read their cancel tokens (those in the step
    // under way are the engine's to cancel): threads whose evals all run in
    // the step sleep until it ends, and never wake the engine's CPU threads.
    bool queued_here = false;
    for (size_t i : queued) queued_here = queued_here || (!mine[i].done && !mine[i].running);
    auto wake = queued_here ? std::chrono::steady_clock::now() + k_cancel_poll
                            : std::chrono::steady_clock::time_point::max();
    if (!stepping_ && between_waiting_ == 0) {
      if (!rejoining_.empty() && std::chrono::steady_clock::now() >= rejoin_until_) {
        // Not back in time: not waited for again until it comes back within a window.
        for (const auto& [o, n] : rejoining_) late_[o] = rejoin_until_;
        rejoining_.clear();
      }
      if (rejoining_.empty()) {
        run_step_locked(lock);
        continue;
      }
      wake = std::min(wake, rejoin_until_);
    }
    if (wake == std::chrono::steady_clock::time_point::max())
      cv_.wait(lock);
    else
      cv_.wait_until(lock, wake);
    // A cancelled entry leaves the queue at once, unless its step is running
    // (then the engine takes it out).
    for (size_t i : queued) {
      entry& q = mine[i];
      if (q.done || q.running || !q.cancel.is_cancelled()) continue;
      waiting_.erase(std::find(waiting_.begin(), waiting_.end(), &q));
      q.result.cancelled = true;
      q.done = true;
    }
  }
  std::exception_ptr error;
  for (size_t i : queued) {
    entries[i].result = mine[i].result;
    if (mine[i].error && !error) error = mine[i].error;
  }
  if (error) std::rethrow_exception(error);
}

void step_loop::run_step_locked(std::unique_lock<std::mutex>& lock) {
  bool picked = false;  // this step's entries are marked running
  try {
    // Entries cancelled while they waited leave without running.
    bool dropped = false;
    for (auto it = waiting_.begin(); it != waiting_.end();) {
      entry* e = *it;
      if (!e->cancel.is_cancelled()) {
        ++it;
        continue;
      }
      e->result.cancelled = true;
      e->done = true;
      it = waiting_.erase(it);
      dropped = true;
    }
    if (dropped) cv_.notify_all();
    if (waiting_.empty()) return;

    // The order: priority, then the owner served least recently, then arrival.
    std::vector<entry*> order(waiting_.begin(), waiting_.end());
    auto served = [&](std::uint64_t owner) -> std::uint64_t {
      auto it = last_served_.find(owner);
      return it == last_served_.end() ? 0 : it->second;
    };
    std::sort(order.begin(), order.end(), [&](const entry* a, const entry* b) {
      if (a->priority != b->priority) return a->priority < b->priority;
      const std::uint64_t sa = served(a->owner), sb = served(b->owner);
      if (sa != sb) return sa < sb;
      return a->arrival < b->arrival;
    });
    struct pick {
      entry* e;
      int64_t rows;
      lm_logits mode;
      bool prefill;
    };
    std::vector<pick> picks;
    for (entry* e : order) {
      const auto n = static_cast<int64_t>(e->rest.size());
      if (n <= opts_.decode_rows) picks.push_back({e, n, e->mode, false});
    }
    int64_t budget = opts_.prefill_rows;
    bool any_prefill = false;
    for (entry* e : order) {
      const auto n = static_cast<int64_t>(e->rest.size());
      if (n <= opts_.decode_rows || budget <= 0) continue;
      int64_t take = std::min(n, budget);
      if (e->mode == lm_logits::all) {  // never cut: whole, or in a later step (first in its step if need be)
        if (n > budget && any_prefill) continue;
        take = n;
      }
      picks.push_back({e, take, take == n ? e->mode : lm_logits::none, true});
      budget -= take;
      any_prefill = true;
    }

    // The batch: entries that would overflow their sequence run on their own,
    // so the engine's error reaches their callers only.
    std::vector<lm_batch_entry> shared, alone;
    std::vector<size_t> shared_of, alone_of;  // index into picks
    shared.reserve(picks.size());
    shared_of.reserve(picks.size());
    alone.reserve(picks.size());
    alone_of.reserve(picks.size());
    lm_output out = lm_output::best;
    int64_t rows = 0;
    for (size_t i = 0; i < picks.size(); ++i) {
      const pick& p = picks[i];
      lm_batch_entry b;
      b.seq = p.e->seq;
      b.toks = p.e->rest.subspan(0, static_cast<size_t>(p.rows));
      b.mode = p.mode;
      b.cancel = p.e->cancel;
      if (p.e->out == lm_output::full) out = lm_output::full;
      rows += p.rows;
      if (static_cast<int64_t>(p.e->seq->tokens().size()) + p.rows > p.e->seq->n_ctx()) {
        alone.push_back(b);
        alone_of.push_back(i);
      } else {
        shared.push_back(b);
        shared_of.push_back(i);
      }
    }
    std::vector<std::exception_ptr> errors(picks.size());
    std::vector<lm_eval_result> results(picks.size());
    std::vector<size_t> before(shared.size());  // each shared entry's sequence size before the batch
    for (size_t k = 0; k < shared.size(); ++k) before[k] = shared[k].seq->tokens().size();
    for (const pick& p : picks) p.e->running = true;
    picked = true;
    stepping_ = true;
    lock.unlock();

    const auto t0 = std::chrono::steady_clock::now();
    if (!shared.empty()) {
      try {
        engine_->eval_batch(shared, out);
        for (size_t k = 0; k < shared.size(); ++k) results[shared_of[k]] = shared[k].result;
      } catch (...) {
        // The engine may fail for one entry (a token out of range, its fork
        // pool full): the entries that committed nothing run again, each
        // alone, so only the faulty one gets its error. One that committed
        // any of its tokens (all or part) before the throw gets the error:
        // its sequence moved on and its result is lost.
        const std::exception_ptr error = std::current_exception();
        for (size_t k = 0; k < shared.size(); ++k) {
          const size_t i = shared_of[k];
          if (shared.size() == 1 || shared[k].seq->tokens().size() != before[k]) {
            errors[i] = error;
            continue;
          }
          shared[k].result = {};
          try {
            engine_->eval_batch(std::span<lm_batch_entry>(&shared[k], 1), out);
            results[i] = shared[k].result;
          } catch (...) {
            errors[i] = std::current_exception();
          }
        }
      }
    }
    for (size_t k = 0; k < alone.size(); ++k) {
      try {
        engine_->eval_batch(std::span<lm_batch_entry>(&alone[k], 1), out);
        results[alone_of[k]] = alone[k].result;
      } catch (...) {
        errors[alone_of[k]] = std::current_exception();
      }
    }
    const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();

    lock.lock();
    ++steps_;
    std::vector<step_trace_entry> trace;
    trace.reserve(picks.size());
    std::map<std::uint64_t, int> rejoining;
    bool any_prefill_ran = false;
    for (size_t i = 0; i < picks.size(); ++i) {
      const pick& p = picks[i];
      entry& e = *p.e;
      e.running = false;
      const lm_eval_result& r = results[i];
      e.result.n_evaluated += r.n_evaluated;
      step_trace_entry t{e.owner, e.priority, p.rows, false, false};
      if (errors[i]) {
        e.error = errors[i];
        e.done = t.finished = true;
      } else if (r.cancelled) {
        e.result.cancelled = true;
        e.done = t.cancelled = true;
      } else {
        e.rest = e.rest.subspan(static_cast<size_t>(std::min<int64_t>(r.n_evaluated, p.rows)));
        // An engine that committed less than it was given without a reason ends the eval there.
        e.done = t.finished = e.rest.empty() || r.n_evaluated < p.rows;
      }
      if (p.prefill) any_prefill_ran = true;
      if (t.finished && !e.error) ++rejoining[e.owner];
      last_served_[e.owner] = static_cast<std::uint64_t>(steps_);
      trace.push_back(t);
    }
    waiting_.erase(std::remove_if(waiting_.begin(), waiting_.end(), [](const entry* e) { return e->done; }),
                   waiting_.end());
    // Waited for: the owners whose evals finished and who have none queued
    // (a thread still waiting for another of its evals does not come back
    // with a new one), unless one did not come back in time after an earlier
    // step (late_: not waited for until it comes back within a window).
    for (const entry* e : waiting_) rejoining.erase(e->owner);
    std::vector<std::uint64_t> late_finished;
    for (auto it = rejoining.begin(); it != rejoining.end();) {
      if (auto l = late_.find(it->first); l != late_.end()) {
        l->second = std::chrono::steady_clock::time_point::max();  // its window: set below
        late_finished.push_back(it->first);
        it = rejoining.erase(it);
      } else {
        ++it;
      }
    }
    auto average = [](double& avg, double x) { avg = avg == 0 ? x : avg + k_average_weight * (x - avg); };
    average(ms_per_step_, ms);
    if (any_prefill_ran && rows > 0) average(ms_per_row_, ms / static_cast<double>(rows));
    rejoining_ = opts_.rejoin_ms > 0 ? std::move(rejoining) : std::map<std::uint64_t, int>{};

    if (observer_) {
      // stepping_ stays set: the next step waits for the observer, whose
      // calls thus come one at a time, in step order; the finished entries'
      // threads go on with their results meanwhile.
      cv_.notify_all();
      lock.unlock();
      try {
        observer_(trace);
      } catch (...) {  // an observer's failure is not the engine's: the loop goes on
      }
      lock.lock();
    }
    // The window for the finished owners' next evals opens when the next step could start.
    rejoin_until_ = std::chrono::steady_clock::now() + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                                           std::chrono::duration<double, std::milli>(opts_.rejoin_ms));
    for (std::uint64_t o : late_finished)
      if (auto l = late_.find(o); l != late_.end()) l->second = rejoin_until_;
    stepping_ = false;
    cv_.notify_all();
  } catch (...) {
    // A failure outside the engine's calls (an allocation): the step's
    // entries (or, before any was picked, every waiting one: no step could
    // run them) end with the error, and the engine is free again.
    if (!lock.owns_lock()) lock.lock();
    const std::exception_ptr error = std::current_exception();
    for (entry* e : waiting_) {
      if (e->done || (picked && !e->running)) continue;
      e->running = false;
      e->error = error;
      e->done = true;
    }
    waiting_.erase(std::remove_if(waiting_.begin(), waiting_.end(), [](const entry* e) { return e->done; }),
                   waiting_.end());
    stepping_ = false;
    cv_.notify_all();
  }
}

}  // namespace qf::server::completion
