// The seam between the LSP server and the completion pipeline.
//
// The server (handlers + scheduler) turns a textDocument/completion or
// textDocument/inlineCompletion request into a completion_request holding the
// document's snapshot (shared with the document store, never copied), and
// runs provider.complete() on the single inference worker thread with a
// cancel_token. The provider owns the model and
// its caches; it never sees JSON (settings arrive as a typed section). Without a model the server uses no provider
// at all and answers an empty list (and says once, via showMessage, that no
// model is loaded). Tests may implement this interface with a test double; the
// shipped binary only uses the real pipeline.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "indexing/definitions.h"
#include "indexing/edit_history.h"
#include "indexing/recent_chunks.h"
#include "indexing/shared_text.h"
#include "inference/core/cancellation.h"
#include "server/completion/api/inflight.h"
#include "server/completion/api/next_edit_types.h"
#include "server/completion/api/settings.h"

namespace qf::index {
class syntax_tree;
}

namespace qf::server {

using clock = std::chrono::steady_clock;

// Positions here are 0-based lines and UTF-8 byte columns (the server converts
// from/to the negotiated LSP position encoding).
struct text_pos {
  int64_t line = 0;
  int64_t byte_col = 0;
};

struct completion_request {
  std::string uri;
  // The key of this buffer's caches (KV slot ownership, prompt layout,
  // type-through, background work); empty: the URI. An editor session holds
  // one buffer per URI (in the daemon each session has a pipeline of its
  // own); the HTTP endpoint keys a client's buffers by API key and file
  // (fim_mapping.h).
  std::string buffer_key;
  const std::string& cache_key() const { return buffer_key.empty() ? uri : buffer_key; }
  int64_t version = 0;             // document version the snapshot belongs to
  std::string language_id;
  // Full document text (UTF-8): the store's immutable snapshot, shared, not
  // copied (a plain string assigned here is owned instead).
  index::shared_text text;
  text_pos cursor;
  bool explicit_trigger = false;   // invoked by the user vs. automatic while typing
  bool inline_request = false;     // textDocument/inlineCompletion vs completion
  int max_tokens = 0;              // tokens to generate at most (HTTP n_predict, within the explicit limit); 0: the trigger's setting
  clock::time_point received;      // when the request arrived
  clock::time_point deadline;      // answer by then, with whatever exists
  // Other open documents, most recently used first, for repo-level context.
  struct other_doc { std::string uri; index::shared_text text; };
  std::vector<other_doc> context_docs;
  // Definitions of the workspace (null: none indexed). Read-only, thread-safe.
  std::shared_ptr<const index::definition_source> definitions;
  // The document's latest syntax tree (null: none; it may be a few edits old).
  std::shared_ptr<const index::syntax_tree> syntax;
  // Recent edits and recently edited/viewed chunks of all documents (null:
  // none). Thread-safe; read only when a new prompt layout is made.
  std::shared_ptr<const index::edit_history> edits;
  std::shared_ptr<const index::recent_chunks> recent;
  // The workspace folders (absolute paths): what a remote source names files
  // relative to, so that no request shows the layout of the user's disk.
  std::vector<std::string> workspace_roots;
  // Where the decoder publishes the text produced so far (null: nowhere); the
  // scheduler reads it to keep a generation the typing continues (inflight.h).
  std::shared_ptr<completion::generation_progress> progress;
  // quickfill/explainCompletion only: the budget an automatic trigger gets
  // (completion.autoDeadlineMs), for the automatic trigger's load plan; 0: none.
  clock::duration automatic_budget{0};
};

// quickfill/explainCompletion's view of `req` as one trigger kind would ask
// it now: that trigger, its budget (explicit: the request's own, automatic:
// automatic_budget) counted from `now`; nullopt when that trigger has none.
inline std::optional<completion_request> as_trigger_now(const completion_request& req, bool explicit_trigger,
                                                        clock::time_point now) {
  const clock::duration budget = explicit_trigger ? req.deadline - req.received : req.automatic_budget;
  if (budget <= clock::duration::zero()) return std::nullopt;
  completion_request r = req;
  r.explicit_trigger = explicit_trigger;
  r.deadline = now + budget;
  return r;
}

struct completion_candidate {
  std::string insert_text;  // text to insert at the cursor (document's line endings)
  text_pos replace_begin;   // range the insertion replaces (usually the cursor itself)
  text_pos replace_end;
  std::string filter_text;  // keeps the item visible while the user types on
  std::string label;        // what a completion menu shows
  // Confidence: mean log-probability of the tokens the model decoded for it
  // (<= 0); nullopt when no model decoded it (type-through, a test double).
  std::optional<double> score;
};

// How a request was degraded under load (docs/completion.md, "Under load"):
// what it was given in place of its settings, counted per kind in the stats.
struct degradation {
  bool shortened = false;           // max_tokens lowered to what fits the time left
  bool candidates_dropped = false;  // extra candidates not decoded (n -> 1)
  bool rerouted = false;            // answered by a source of the routes' underLoad route
  int64_t max_tokens = 0;           // the token limit it got (0: not estimated)
  int64_t candidates = 0;           // the candidates it got (0: not estimated)
  double estimate_ms = 0;           // the estimate before degrading
  double left_ms = 0;               // the time left to its deadline when it started, less the margin
  // Background steps the provider paused under load since its previous answer
  // (they are counted in the stats with the answer that carries them).
  int64_t background_paused = 0;
  bool any() const { return shortened || candidates_dropped || rerouted; }
};

struct completion_metrics {
  double queue_ms = 0;        // from received to the worker starting it
  double ttft_ms = 0;         // time to first generated token
  double tpot_ms = 0;         // mean time per output token after the first
  double total_ms = 0;        // end to end
  int64_t tokens_reused = 0;  // prompt tokens served from the KV cache
  int64_t tokens_evaluated = 0;
  int64_t tokens_generated = 0;
  int64_t tokens_drafted = 0;   // speculative tokens proposed
  int64_t tokens_accepted = 0;  // speculative tokens accepted
  bool cache_hit = false;       // any reuse at all
  bool type_through = false;    // answered from the previous suggestion
  bool kept = false;            // ... made by a generation kept running while the user typed it (inflight.h)
  int64_t candidates = 0;       // sequences decoded from the one prompt
  int64_t duplicates = 0;       // candidates dropped as the same text as a better one
  int64_t gated = 0;            // candidates dropped by the confidence gate
  std::optional<double> score;  // the best decoded candidate's score, shown or gated
  degradation degraded;         // under load (all false: given what the settings ask)
};

// What the model would be given for a request, part by part.
struct prompt_part {
  std::string kind;    // "special", "scope", "definition", "recent", "edits", "file", "prefix", "suffix", "middle"
  std::string origin;  // where it came from: a URI, "URI:LINE", or empty
  std::string text;    // the part as the model sees it (special tokens as their text)
  int64_t tokens = 0;
};

// The confidence gate a request class gets (completion/gate_file.h).
struct gate_explanation {
  std::string trigger;  // "automatic", "explicit"
  double threshold = -100;
  std::string origin;   // "setting", "calibrated PATH", "default"
};

// What a request of one trigger kind would be given now under the engine's
// load, and why (the estimate against the time left; docs/completion.md).
struct load_explanation {
  std::string trigger;       // "automatic", "explicit"
  bool over_budget = false;  // the estimate breaks the budget
  bool degraded = false;     // ... and completion.degrade is on: it is degraded (or rerouted)
  double estimate_ms = 0;    // wait + prompt + decoding, with the settings' limits
  double left_ms = 0;        // the trigger's budget, less the margin
  double wait_ms = 0;        // for other sequences' rows on a shared engine
  int64_t prompt_rows = 0;   // prompt tokens to evaluate after the cache's reuse
  int64_t max_tokens = 0;    // the token limit it would get
  int64_t candidates = 0;    // the candidates it would get
  bool shortened = false, candidates_dropped = false;
  bool background_paused = false;  // background work and prefetch wait while others' work runs
  std::string rerouted_to;   // the source that would answer instead (routes.underLoad), or empty
  std::string reason;        // one line for people
};

struct prompt_explanation {
  std::string format;              // the FIM format's name
  std::string text;                // the whole prompt: the parts' texts concatenated
  int64_t tokens = 0;              // the whole prompt's token count
  std::vector<prompt_part> parts;  // in prompt order
  std::vector<gate_explanation> gates;  // the confidence gate of each trigger kind (empty: not known)
  std::vector<load_explanation> load;   // the load plan of each trigger kind (empty: not known)
};

struct completion_result {
  std::vector<completion_candidate> items;
  bool incomplete = false;  // budget ran out before a useful answer; ask again
  completion_metrics metrics;
};

// A source's health as quickfill/status shows it.
struct source_health {
  std::string state = "ok";  // "ok", "degraded" (recent failures), "down", "circuit_open"
  std::string detail;        // one line for people (no credentials)
};

class completion_provider {
 public:
  virtual ~completion_provider() = default;
  // Runs on the inference worker. Must poll `cancel` between layers/tokens and
  // return promptly once it is set (the server then answers -32800/-32801 and
  // discards the result). Must stop by req.deadline with what exists. Throws
  // source_failure (source_failure.h) when it could not answer at all.
  virtual completion_result complete(const completion_request& req, const cancel_token& cancel) = 0;
  // Low-priority work (cache warming, prefetch) run when no request is queued;
  // returns false when there is nothing left to do. Must poll `cancel`.
  virtual bool background_step(const cancel_token& cancel) { return false; }
  // The prompt complete() would build for `req`, explained; nullopt when the
  // provider cannot say. Runs on the inference worker; evaluates nothing.
  virtual std::optional<prompt_explanation> explain(const completion_request& req) { return std::nullopt; }
  // What `req` would be given now under the engine's load (its trigger kind,
  // budget from req.deadline); nullopt when the provider cannot estimate.
  // Runs on the inference worker; evaluates nothing. The router asks it to
  // send automatic requests to the routes' underLoad sources.
  virtual std::optional<load_explanation> load_plan(const completion_request& req) { return std::nullopt; }
  // Next-edit prediction (quickfill/nextEdit): minimal edits to the region
  // around the cursor and to a place the latest edit points to. Runs on the
  // inference worker, polls `cancel` like complete(). The default predicts
  // nothing.
  virtual next_edit_result next_edit(const next_edit_request& req, const cancel_token& cancel) {
    next_edit_result r;
    r.reason = "this provider does not predict edits";
    return r;
  }
  // Document lifecycle hints so caches can be keyed on open buffers: `key`
  // is the request's cache_key() (the URI, unless the caller keyed buffers).
  virtual void document_closed(const std::string& key) {}
  // How many editor sessions share this provider's engine and memory budget
  // (the daemon: each session has a provider of its own on a shared engine):
  // the provider keeps its caches within cacheMiB / sessions.
  virtual void sessions_changed(int sessions) {}
  // Settings changed: the completion section, already validated.
  virtual void configure(const completion::completion_settings& settings) {}
  // One-line description for status (model name, quantization, backend).
  virtual std::string describe() const = 0;
  // For quickfill/status; callable from the worker thread only, like the rest.
  virtual source_health health() const { return {}; }
};

}  // namespace qf::server
