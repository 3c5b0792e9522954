// Continuous batching: sequences decoded on many threads (the daemon's
// sessions, each with its own pipeline) share one engine, whose evals run as
// steps of one engine batch each.
//
// A step_loop wraps one engine backend. Each owner (a daemon session) gets a
// view of it (view(owner)): an lm_backend whose sequences are the engine's,
// and whose evals, instead of running at once, join the loop's queue. One
// step at a time runs: the thread whose eval finds no step running leads it,
// taking every waiting entry it can within the step's rows, running them as
// one lm_backend::eval_batch (weights read once for every row), and handing
// the results back; entries that arrived meanwhile make the next step (group
// commit: batches form under load). The one wait for company: the owners
// whose evals finished in the last step are given `rejoin_ms` to queue their
// next eval before another step starts without them (so B decoders stay in
// one step, and a prompt's chunks never run twice in a row without the
// others' decode tokens). Not waited for: an owner with an eval still queued
// (its thread is waiting, not coming back), and one that did not come back
// within its last window, until it once does (so a slow owner costs the wait
// once, not every step).
//
// What a step takes, in order:
//  1. every waiting decode entry (an eval of at most `decode_rows` tokens),
//     in priority order, then least recently served owner first;
//  2. pending prefill, up to `prefill_rows` rows in all, in the same order: a
//     long prompt is cut into chunks (its earlier chunks evaluate with no
//     logits, the last one as asked), so it never stalls the others'
//     keystrokes by more than one chunk. An eval asking for every row's
//     logits (lm_logits::all: draft verification) is never cut.
// Priorities (step_priority): keystrokes, then explicit requests, then
// next-edit, then background warming. An owner's priority is what its
// session set last (set_priority, before each call), so the threads a call
// starts (n candidates) share it.
//
// Sequences join and leave between steps. An entry whose cancel token fires
// while it waits leaves the queue at once (cancelled, with what its earlier
// chunks committed); one cancelled during its step is taken out by the engine
// batch, the others go on unchanged (lm_backend::eval_batch). Every other
// engine call of a view's sequences (keep_first, move_range, copy_prefix,
// new_sequence, fork, adopt_prefix) runs between steps, under the loop's lock.
//
// Prefixes shared across owners: the loop knows every live sequence of its
// views (each registered when made, unregistered between steps as it goes).
// A view's adopt_prefix (lm_backend) looks, between steps, for the sequence
// of any owner holding the longest prefix of a prompt, and copies those
// cells into the caller's sequence (the engine's copy_prefix): a second
// window on a file, or a second document with the same head, evaluates only
// what follows the head another session computed. No step runs then, and
// every change of a sequence's tokens is made in a step or between steps, so
// the other owners' tokens and cells hold still while they are read; a
// sequence being destroyed waits for the copy to end.
//
// Errors: what the engine throws reaches the callers of the entries it failed.
// When a step's batch of several entries throws, those that committed nothing
// run again, each alone, so one owner's faulty eval (a token out of range, its
// fork pool full) fails only its own caller; one that committed some of its
// tokens before the throw gets the error. A failure of the loop itself (an
// allocation) fails that step's entries, and the loop goes on.
//
// Observation: an optional observer is told, after each step, which entries
// it ran (owner, priority, rows, whether the entry finished or was
// cancelled); traces and the daemon's load tests read the order from it.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <span>
#include <vector>

#include "server/completion/api/lm.h"

namespace qf::server::completion {

enum class step_priority : int { keystroke = 0, explicit_request = 1, next_edit = 2, background = 3 };
const char* to_string(step_priority p);

struct step_loop_options {
  int64_t decode_rows = 2;    // an eval of at most this many tokens is a decode entry (never cut)
  int64_t prefill_rows = 64;  // prompt rows a step gives to pending prefill, beyond the decode entries
  // How long a thread about to lead a step waits for the owners whose evals
  // finished in the previous step to queue their next one (a decoder's next
  // token comes back within microseconds); 0: never waits.
  double rejoin_ms = 1.0;
};

struct step_trace_entry {
  std::uint64_t owner = 0;
  step_priority priority = step_priority::keystroke;
  int64_t rows = 0;        // tokens of this entry run in the step
  bool finished = false;   // its eval is done (not cut, or its last chunk)
  bool cancelled = false;  // cancelled during the step
};

class step_loop {
 public:
  using step_observer = std::function<void(const std::vector<step_trace_entry>& step)>;

  explicit step_loop(std::shared_ptr<lm_backend> engine, step_loop_options o = {});
  ~step_loop();
  step_loop(const step_loop&) = delete;
  step_loop& operator=(const step_loop&) = delete;

  // The engine as `owner` sees it. Views and their sequences must go before
  // the loop; a view's vocab() is the engine's.
  std::unique_ptr<lm_backend> view(std::uint64_t owner);
  // The priority of `owner`'s evals from now on (keystroke until set).
  void set_priority(std::uint64_t owner, step_priority p);
  // Forgets an owner's priority and fairness record (its session ended), and
  // no step waits for it to rejoin.
  void forget(std::uint64_t owner);

  // Set before the first eval (not synchronised with running steps); called
  // after each step, outside the loop's lock, on the leading thread, before
  // the next step starts (so it must not call the loop or its views: the
  // step is not over until it returns; what it throws is dropped).
  void set_observer(step_observer o) { observer_ = std::move(o); }

  int64_t steps() const;
  // The load an eval of `owner` would meet now (lm_load): the other owners'
  // entries waiting or running; the rows its next eval would wait for, that
  // is their queued prompt rows (not those running, nor decode entries, which
  // ride in its step) at the same or a higher priority than `owner`'s
  // current one (lower ones it overtakes); their foreground (not background)
  // entries; and the recent step times.
  lm_load load(std::uint64_t owner) const;
  lm_backend& engine() { return *engine_; }

 private:
  class view_backend;
  class view_sequence;
  struct entry;  // one waiting eval (on its caller's stack)
  lm_eval_result submit(std::uint64_t owner, lm_sequence& seq, std::span<const int32_t> toks, lm_logits mode,
                        const cancel_token& cancel, lm_output out);
  // Submits evals of distinct engine sequences together (one view's
  // eval_batch: they join the queue at once) and waits for all of them; the
  // entries' seq pointers are the engine's sequences.
  void submit_all(std::uint64_t owner, std::span<lm_batch_entry> entries, lm_output out);
  // lm_backend::adopt_prefix for dst, an engine sequence of a view of this
  // loop, from the other live sequences (between steps).
  int64_t adopt_prefix(lm_sequence& dst, std::span<const int32_t> prompt, int64_t min_tokens);
  // Runs engine calls other than eval between steps.
  template <class F>
  auto between_steps(F&& fn) -> decltype(fn());
  // Picks this step's entries and rows (the order above), runs them, and
  // hands back the results; called by the leading thread with the lock held.
  void run_step_locked(std::unique_lock<std::mutex>& lock);

  std::shared_ptr<lm_backend> engine_;
  step_loop_options opts_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<entry*> waiting_;
  std::map<std::uint64_t, step_priority> priority_;
  std::map<std::uint64_t, std::uint64_t> last_served_;  // owner -> step counter when last served
  // The engine sequences of every live view sequence, all owners' (added as
  // a view sequence is made, removed between steps as it goes).
  std::set<const lm_sequence*> live_;
  bool stepping_ = false;    // a step (or another engine call) holds the engine
  int between_waiting_ = 0;  // engine calls waiting to run between steps (they go before the next step)
  std::uint64_t arrivals_ = 0;  // entries submitted so far (ties of the order go to the earlier)
  std::map<std::uint64_t, int> rejoining_;  // owner -> its evals finished in the last step, not yet followed
  std::chrono::steady_clock::time_point rejoin_until_{};
  // Owners that did not come back within a window -> the end of their latest
  // window (time_point::max while it is being set); not waited for until
  // they queue an eval before it ends.
  std::map<std::uint64_t, std::chrono::steady_clock::time_point> late_;
  int64_t steps_ = 0;
  double ms_per_step_ = 0, ms_per_row_ = 0;
  step_observer observer_;
};

}  // namespace qf::server::completion
