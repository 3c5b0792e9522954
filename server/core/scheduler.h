// The inference worker: one thread that owns the completion provider and runs
// completion jobs one at a time, with cancellation as a value.
//
// Policy:
// * Jobs run in arrival order; tasks (load a model, pass settings, drop a
//   closed document's cache) share the queue and are never cancelled.
// * Each job carries a cancel_source. cancel(key), cancel_document(uri) and
//   cancel_all() cancel queued jobs (removed at once) and the running one (its
//   token is set; the provider notices at its next check). The job's
//   on_cancel callback runs immediately on the cancelling thread, exactly once,
//   with the typed outcome (cancel_reason: cancelled, preempted = superseded,
//   content_modified, deadline, shutdown), so the caller answers its request
//   without waiting for the worker; the worker's late result is the caller's
//   to discard (reply-once). What a reason means on the wire is the binding's
//   business (server/binding/lsp_errors.h), not the scheduler's.
// * Latest request wins: submitting a job cancels (reason `preempted`) every
//   other queued or running job of the same group (document + request kind).
// * When the queue is empty the worker calls provider->background_step() until
//   it reports nothing left; submitting anything cancels that step with
//   `preempted`. Background work resumes after the next job or task.
// * In-flight reuse (completion/inflight.h): a running job whose generation
//   the typing continues is kept. An edit that inserts at its cursor what it
//   has produced, or the client's cancel of a job that has produced text,
//   answers its request (on_cancel) but leaves its work running, detached: a
//   detached job has no request any more, so neither latest-wins nor a
//   cancel by key reach it, only an edit or a request of its group that does
//   not continue it (or closing the document, shutdown).
// * The time from cancelling a running job to the worker becoming free is
//   measured (cancel-to-free latency) and passed to the stats collector
//   (stats.h; the scheduler uses the stats, never the other way round).
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <variant>
#include <vector>

#include "server/completion/api/completion_provider.h"

namespace qf::server {

class stats_collector;

class scheduler {
 public:
  using provider_slot = std::unique_ptr<completion_provider>;

  struct job {
    std::string key;    // unique per request (the JSON-RPC id)
    std::string uri;    // document it reads; edits to it cancel the job
    std::string group;  // latest-wins group (uri + request kind); empty: none
    // Runs on the worker; `provider` is null when no model is loaded.
    std::function<void(completion_provider* provider, const cancel_token& cancel)> run;
    // Called once, on the cancelling thread, when the job is cancelled before
    // its run() returned.
    std::function<void(cancel_reason why)> on_cancel;
    // In-flight reuse: the text and cursor (byte offset) the job reads and
    // what its generation has produced so far; null progress: any edit of
    // the document cancels the job.
    index::shared_text text;
    std::size_t cursor = 0;
    std::shared_ptr<completion::generation_progress> progress;
  };
  using task = std::function<void(provider_slot& provider)>;

  explicit scheduler(stats_collector* stats = nullptr, bool background = true);
  ~scheduler();
  scheduler(const scheduler&) = delete;
  scheduler& operator=(const scheduler&) = delete;

  void start();
  // Cancels everything (reason shutdown), waits for the worker and destroys
  // the provider on it.
  void stop();

  void submit(job j);
  void post_task(task t);

  bool cancel(const std::string& key, cancel_reason why);
  std::size_t cancel_document(const std::string& uri, cancel_reason why);
  // An edit made document `uri` read `text`: cancels its jobs (reason
  // content_modified) except a running one the edit continues, which is
  // detached (its request answered, its work kept). Returns the jobs cancelled.
  std::size_t document_edited(const std::string& uri, std::string_view text);
  std::size_t cancel_all(cancel_reason why);

  std::size_t queued() const;
  bool busy() const;
  std::uint64_t background_steps() const;
  std::uint64_t detached() const;  // jobs kept running past their request so far

 private:
  struct entry {
    job j;
    cancel_source source;
    bool running = false;
    bool cancelled = false;  // source cancelled; on_cancel already taken
    bool detached = false;   // on_cancel already taken, work still wanted
    clock::time_point cancel_time{};
  };
  using item = std::variant<std::shared_ptr<entry>, task>;

  void worker_main();
  // Marks `e` cancelled under the lock; returns its on_cancel to call after unlocking.
  std::function<void(cancel_reason)> cancel_locked(entry& e, cancel_reason why);
  // Detaches `e` (see the policy); returns its on_cancel to call after unlocking.
  std::function<void(cancel_reason)> detach_locked(entry& e);
  // Cancels and removes the queued jobs on `uri` (every queued job when `uri`
  // is null); appends their on_cancel to `out`; returns how many.
  std::size_t cancel_queued_locked(const std::string* uri, cancel_reason why,
                                   std::vector<std::function<void(cancel_reason)>>& out);
  // Whether `text` with the cursor at `cursor` (npos: wherever the typing
  // left it) continues the running job's generation.
  bool continues_running_locked(std::string_view text, std::size_t cursor) const;
  void preempt_background_locked();

  stats_collector* stats_;
  bool background_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<item> queue_;
  std::shared_ptr<entry> running_;
  std::optional<cancel_source> background_source_;
  bool background_done_ = false;
  bool stopping_ = false;
  bool task_running_ = false;
  std::uint64_t background_steps_ = 0;
  std::uint64_t detached_ = 0;
  provider_slot provider_;  // touched only by the worker thread
  std::thread worker_;
};

}  // namespace qf::server
