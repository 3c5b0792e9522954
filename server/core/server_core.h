// The LSP-free server core: open documents, the inference worker, settings,
// the model's state and statistics, behind a plain C++ API.
//
// The LSP binding (lsp_server) translates messages into calls here and
// results back into messages; nothing in this class knows JSON-RPC or
// position encodings beyond the text types. The request policy is here, not
// in a binding (server_core_requests.cpp): the deadline of each request, the
// stats of every completion, whether the document changed while the worker
// ran, and failures as values (request_outcome.h) that each binding maps to
// its protocol. Callbacks that must reach the
// dispatcher thread go through the `post` function given at construction.
// The completion provider is created by an injected factory (the real one in
// the shipped binary, test doubles in tests) on the worker thread, which owns
// it from then on.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "indexing/document_store.h"
#include "indexing/edit_history.h"
#include "indexing/recent_chunks.h"
#include "indexing/syntax_index.h"
#include "indexing/workspace_index.h"
#include "server/completion/pipeline/provider_factory.h"
#include "server/core/acceptance_stats.h"
#include "server/core/core_requests.h"
#include "server/core/privacy_filter.h"
#include "server/routing/source_board.h"
#include "server/core/scheduler.h"
#include "server/core/settings.h"
#include "server/core/stats.h"

namespace qf::server {

using provider_factory =
    std::function<std::unique_ptr<completion_provider>(const provider_options& opts, std::string* error)>;

struct core_options {
  std::string cli_model_path;  // --model (wins over the "model" setting)
  std::string cli_device;      // --device ("" = the "device" setting decides)
  int n_threads = 0;           // --threads
  bool step_graphs = true;     // off with QUICKFILL_STEP_GRAPHS=0 (read once by main)
  provider_factory factory;    // the binary injects make_completion_provider; tests a double
  bool background = true;      // run provider->background_step() when idle
  index::store_limits documents;  // --max-open-documents, --max-document-bytes
  index::workspace_options workspace;  // the workspace index (on_progress is set by the caller)
  // The user config file (user_config.h; read by the LSP binding): unset, the
  // one of this process's environment; "" reads none. The binary sets it from
  // the editor's environment (server_args::user_config; the daemon's sessions
  // get it in the hello).
  std::optional<std::string> user_config_path;
};

struct model_state {
  bool loading = false;
  bool loaded = false;
  std::string path;
  std::string source;       // --model / setting / default
  std::string description;  // provider->describe() when loaded
  std::string error;        // why no model is loaded
};

// What the core is doing now (quickfill/status).
struct core_status {
  model_state model;
  std::size_t open_documents = 0, stale_documents = 0, open_document_bytes = 0;
  std::size_t queued = 0;  // jobs and tasks waiting for the worker
  bool worker_busy = false;
  boost::json::value sources;  // each completion source's health, and the routes (routing/source_board.h)
  boost::json::value routes;
};

class server_core {
 public:
  using post_fn = std::function<void(std::function<void()>)>;

  server_core(core_options opts, post_fn post);
  ~server_core();

  void start();
  void stop();

  index::document_store& documents() { return docs_; }
  // Syntax trees of the open documents, reparsed off the dispatcher thread;
  // readers take syntax().latest(uri), which never waits for a parse.
  const index::syntax_index& syntax() const { return syntax_; }
  index::syntax_index& syntax() { return syntax_; }
  stats_collector& stats() { return stats_; }
  scheduler& worker() { return worker_; }
  server_settings settings() const;  // the server's section
  // The engine options the next load uses: the "device" setting unless
  // --device was given, --threads, step graphs.
  completion::engine_options engine_options() const;

  // Replaces the whole settings (parsed and validated by the caller); returns
  // true when the model path they select changed (the caller then reloads).
  // Passes the completion section to the provider.
  bool apply_settings(const quickfill_settings& next);

  // Loads (or reloads) the model on the worker. Both callbacks run on the
  // dispatcher thread.
  void load_model(std::function<void(int percent, const std::string& message)> progress,
                  std::function<void(const model_state&)> done);
  model_state model() const;

  // Document events. Each cancels the document's queued and running
  // completions (ContentModified) before anything else happens. open() is
  // false (with *error) when the store's limits refuse the document, which is
  // then not tracked; change() is false when the change was not applied (the
  // document is then stale or not tracked, see document_store.h).
  bool open(const std::string& uri, const std::string& language_id, std::int64_t version, std::string text,
            std::string* error);
  bool change(const std::string& uri, std::int64_t version, const std::vector<index::text_change>& changes,
              text::position_encoding enc, std::string* error);
  void close(const std::string& uri);
  // A message about `uri` was lost (unreadable or invalid): its completions
  // are cancelled and the document is stale. Without a URI every open
  // document is. Returns how many documents were marked.
  std::size_t document_lost(const std::string& uri, const std::string& reason);

  // Requests of a binding (server_core_requests.cpp, the types in
  // core_requests.h): each is answered exactly once through `reply`.
  // request_document: the open document a request at `uri` reads, or why
  // there is none (not_open; unavailable when it is out of sync or not tracked).
  outcome<index::document_store::snapshot> request_document(const std::string& uri) const;
  // A completion with the deadline of its trigger (the explicit or automatic
  // deadline setting), recorded in the stats however it ends; a result whose
  // document changed meanwhile fails with content_modified.
  void request_completion(completion_call call, reply_fn<completion_answer> reply);
  // The prompt a completion at the place would get (quickfill/explainCompletion):
  // unavailable for a private document, without a model, or when the provider
  // cannot say.
  void request_explanation(explain_call call, reply_fn<prompt_explanation> reply);
  // A next-edit prediction with the explicit deadline; kept with its snapshot
  // so that an inline completion on that snapshot offers its edits too.
  void request_next_edit(next_edit_call call, reply_fn<next_edit_answer> reply);
  // Cancels the request `key` (reason cancelled); false when it is neither
  // queued nor running.
  bool cancel(const std::string& key);
  // Cancels every queued and running request (shutdown).
  void cancel_all(cancel_reason why);
  core_status status() const;
  // The statistics document of quickfill/stats and the HTTP endpoint's
  // /quickfill/stats: the completion stats (stats.h) with the acceptance
  // stats and each source's meters; `recent` requests listed.
  boost::json::value stats_json(std::size_t recent);

  // Queues a completion. `done` runs on the dispatcher thread with the result
  // (provider == null -> no_model) unless the job was cancelled first, in which
  // case `on_cancel` ran instead (on the cancelling thread).
  // A provider that throws (a source failed and had no fallback) still gets
  // its request answered: `failed` with the reason in `error`.
  struct completion_outcome {
    completion_result result;
    bool no_model = false;
    bool failed = false;
    std::string error;
  };
  void complete(const std::string& key, completion_request req,
                std::function<void(completion_outcome)> done, std::function<void(cancel_reason)> on_cancel);

  // Queues an explanation of the prompt `req` would get (quickfill/explainCompletion):
  // a job on the worker like a completion (after a model load in progress,
  // cancellable, cancelled by edits), never preempting completions. `done`
  // runs on the dispatcher with nullopt when there is no model (no_model) or
  // the provider cannot say.
  void explain(const std::string& key, completion_request req,
               std::function<void(std::optional<prompt_explanation>, bool no_model)> done,
               std::function<void(cancel_reason)> on_cancel);

  // Queues a next-edit prediction (server_core_next_edit.cpp): a job like a
  // completion (latest wins per document, cancelled by every edit of it).
  // `done` runs on the dispatcher; no_model when there is no provider.
  void next_edit(const std::string& key, next_edit_request req,
                 std::function<void(next_edit_result, bool no_model)> done, std::function<void(cancel_reason)> on_cancel);
  acceptance_stats& acceptance() { return acceptance_; }
  // Routing (server/routing/): the provider a load makes is a router over the
  // sources of the settings; the board shows their health and meters, read
  // without the worker. Notices of the router (a spent quota, a source that
  // could not be made) go to `handler` on the dispatcher thread.
  routing::source_board& sources() { return *board_; }
  void set_notice_handler(std::function<void(const std::string&)> handler);
  // Cancels every queued or running next-edit job (reason preempted): a
  // completion never waits behind a next edit.
  void cancel_next_edits();

  // Fills context_docs with other open documents, most recently used first,
  // the context sources (syntax tree, edit history, recent chunks) and
  // definitions with the workspace index (when there is one); notes the
  // cursor's place in the recent-chunks ring. Private documents (below) are
  // never context, and a request on one gets no context at all.
  void add_context(completion_request& req) const;

  // Privacy (privacy_filter.h, docs/security.md): why the open document `uri`
  // is kept out of completions and prompts (privacy.exclude,
  // privacy.disabledLanguages), or "". complete(), explain() and next_edit()
  // answer a private document without calling the provider, and its text is
  // never recorded as context (recent chunks, edit history, workspace index).
  std::string why_private(const std::string& uri) const;
  std::shared_ptr<const privacy_filter> privacy() const;
  const index::edit_history& edit_history() const { return *edits_; }
  const index::recent_chunks& recent_chunks() const { return *recent_; }

  // The workspace index (server_core_workspace.cpp). set_workspace_roots
  // starts it when the workspace.index setting is on (and stops it when it is
  // off); null while there is none.
  void set_workspace_roots(std::vector<std::string> root_paths);
  void workspace_files_changed(std::vector<index::file_change> changes);
  std::shared_ptr<index::workspace_index> workspace() const { return workspace_; }

 private:
  core_options opts_;
  post_fn post_;
  index::document_store docs_;
  index::syntax_index syntax_;  // fed after each applied open/change/close
  std::shared_ptr<index::workspace_index> workspace_;  // dispatcher thread only
  std::vector<std::string> workspace_roots_;
  bool workspace_requested_ = false;  // set_workspace_roots was called
  // Fed after each applied change (and open, for the ring); read by the worker.
  std::shared_ptr<index::edit_history> edits_ = std::make_shared<index::edit_history>();
  std::shared_ptr<index::recent_chunks> recent_ = std::make_shared<index::recent_chunks>();
  stats_collector stats_;
  acceptance_stats acceptance_;
  std::mutex next_edit_mu_;
  std::set<std::string> next_edit_keys_;  // jobs of next_edit() not finished yet
  // The latest next-edit prediction of each document, with the snapshot it
  // was made on (request_next_edit); under next_edit_mu_.
  struct cached_next_edit {
    index::document_store::snapshot doc;
    std::vector<next_edit_edit> edits;
  };
  std::map<std::string, cached_next_edit> next_edit_cache_;
  std::uint64_t next_edit_ids_ = 0;
  // An inline completion at `at`: the cached edits of its snapshot that start
  // on the cursor's line, as items after the candidates.
  void add_cached_next_edits(const request_place& at, completion_result& result);
  scheduler worker_;
  mutable std::mutex mu_;
  quickfill_settings settings_;
  model_state model_;
  std::string loaded_choice_;  // path of the last load attempt
  std::shared_ptr<routing::source_board> board_ = std::make_shared<routing::source_board>();
  std::function<void(const std::string&)> notice_handler_;  // under mu_
  // Privacy: rebuilt from the settings and the workspace folders (dispatcher
  // thread), read under mu_; a change moves open documents in or out of the
  // context sources.
  std::shared_ptr<const privacy_filter> privacy_;
  void refresh_privacy();
  bool is_private(const index::document& d) const;
};

}  // namespace qf::server
