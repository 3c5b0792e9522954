// The completion pipeline: the completion_provider that the server runs on
// its inference worker.
//
// Per request: trigger rules -> type-through cache -> prompt layout (per
// document, reused while valid) -> prefix cache slot -> budgeted prompt phase
// and decoding -> post-processing -> candidate. When the prompt phase runs out
// of budget the answer is empty and incomplete, and the rest of the prompt is
// evaluated by background_step() so that the next keystroke hits the cache.
// Background work, in priority order: finishing such prompts, re-basing a
// document whose typed text spans lines (a new layout at the cursor line,
// warmed in another slot and adopted once ready), and prefetching the
// continuation of an accepted suggestion (when enabled). All of it polls the
// server's cancel token, which the server sets when a request arrives.
#pragma once

#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "server/completion/decode/candidates.h"
#include "server/completion/prompt/chunk_tokenizer.h"
#include "server/completion/decode/draft_model.h"
#include "server/completion/prompt/fim_format.h"
#include "server/completion/postprocess/gate_file.h"
#include "server/completion/decode/generator.h"
#include "server/completion/decode/kv_pool.h"
#include "server/completion/api/lm.h"
#include "server/completion/pipeline/load_budget.h"
#include "server/completion/next_edit/next_edit.h"
#include "server/completion/prompt/prompt_layout.h"
#include "server/completion/api/settings.h"
#include "server/completion/decode/type_through.h"
#include "server/completion/api/completion_provider.h"

namespace qf::server::completion {

class pipeline final : public completion_provider {
 public:
  pipeline(std::unique_ptr<lm_backend> backend, const completion_settings& settings);
  ~pipeline() override;

  completion_result complete(const completion_request& req, const cancel_token& cancel) override;
  bool background_step(const cancel_token& cancel) override;
  // explain.cpp: the prompt complete() would build, from a scratch copy of
  // the document's layout (no evaluation, no change to layouts or KV slots).
  std::optional<prompt_explanation> explain(const completion_request& req) override;
  // explain.cpp: the load plan of req's trigger kind (load_budget.h), from a
  // scratch prompt and the cache's reuse, evaluating nothing.
  std::optional<load_explanation> load_plan(const completion_request& req) override;
  // pipeline_next_edit.cpp: next_edit_engine on this pipeline's model and KV pool.
  next_edit_result next_edit(const next_edit_request& req, const cancel_token& cancel) override;
  // The model's name (GGUF general.name and file name), for the next-edit format.
  void set_model_name(std::string name);
  // The model's calibrated confidence gate (gate_file.h): used for automatic
  // triggers unless the settings set completion.minConfidence.
  void set_calibrated_gate(std::optional<calibrated_gate> gate) { calibrated_gate_ = std::move(gate); }
  // The gate a request class gets now, and where it came from.
  gate_choice gate(bool explicit_trigger) const { return resolve_gate(s_, explicit_trigger, calibrated_gate_); }
  // Loads draft models (completion.draftModel): the factory gives the engine's loader.
  using backend_loader = std::function<std::unique_ptr<lm_backend>(const std::string& path, std::string* error)>;
  void set_draft_loader(backend_loader loader) { draft_loader_ = std::move(loader); }
  // Loads s_.draft_model (none: drops the draft model). False with *error when
  // it cannot draft (unreadable, another tokenizer); prompt lookup stays.
  bool load_draft_model(std::string* error);
  // Takes a loaded draft model (tests); false with *error when its tokenizer differs.
  bool set_draft_model(std::unique_ptr<lm_backend> draft, std::string* error);
  const model_drafter* draft_model() const { return draft_.get(); }
  void document_closed(const std::string& key) override;
  void sessions_changed(int sessions) override;
  void configure(const completion_settings& settings) override;
  std::string describe() const override;

  // For tests and benchmarks.
  const completion_settings& settings() const { return s_; }
  const fim_format& format() const { return fmt_; }
  const kv_pool& pool() const { return *pool_; }
  const chunk_tokenizer& tokenizer() const { return tok_; }
  size_t pending_background() const { return tasks_.size(); }
  const layout* layout_of(const std::string& key) const;

 private:
  // Per buffer, keyed by the requests' cache_key().
  struct doc_state {
    std::string uri;          // the document's URI (what prompts name)
    layout lay;
    std::vector<layout> parked;  // layouts of regions the cursor left (prompt_layout.h)
    layout pending;           // a re-based layout being warmed
    bool pending_ready = false;
    int live_slot = -1;
    int pending_slot = -1;    // the slot the pending layout is warmed in
    // The last request, for background work (texts shared with the request).
    index::shared_text text;
    int64_t line = 0, col = 0;
    int64_t row = 0;  // the cursor's row (text_rows.h)
    std::vector<std::pair<std::string, index::shared_text>> extra;
    // Context sources of the last request (context_block.h).
    std::string language_id;
    std::shared_ptr<const index::syntax_tree> syntax;
    std::shared_ptr<const index::definition_source> definitions;
    std::shared_ptr<const index::edit_history> edits;
    std::shared_ptr<const index::recent_chunks> recent;
    bool explicit_trigger = false;
    std::string suggestion;  // what was answered (for prefetch)
  };
  struct prefetched {
    index::shared_text text;  // the document with the suggestion accepted
    size_t cursor = 0;
    std::string suggestion;
  };
  enum class task_kind { warm, draft_warm, rebase, prefetch };
  struct task {
    task_kind kind;
    std::string key;              // the buffer's cache key
    std::vector<int32_t> tokens;  // warm: the prompt to finish
  };

  // One request: the trigger, the prompt, decoding with the stop rules, the
  // cleanup of each candidate. Returns the text of the first suggestion shown
  // (cleaned, without the word before the cursor; empty: none). A prefetch
  // only wants that text: it gets no items.
  std::string run(const completion_request& req, const cancel_token& cancel, completion_result& res,
                  bool prefetch = false);
  void queue(task t);
  void drop_tasks(const std::string& key, task_kind kind);
  bool run_rebase(doc_state& ds, const std::string& key, const cancel_token& cancel);
  bool run_prefetch(doc_state& ds, const std::string& key, const cancel_token& cancel);
  layout_input input_of(const doc_state& ds, std::vector<extra_doc>& extra) const;
  void reset_caches();
  static void take_request(doc_state& ds, const completion_request& req, int64_t line, int64_t col);
  // Keeps the moving averages of prompt throughput and decode step time.
  void note_prefill(const gen_outcome& out);
  // The token limit of a request (its trigger's setting, or the client's own).
  int max_tokens_of(const completion_request& req) const;
  // The load estimate of a request with these figures, under the settings' policy.
  load_decision decide_load(int64_t prompt_rows, int max_tokens, int candidates, double left_ms) const;
  // explain.cpp: the prompt complete() would build, on a scratch copy of the layout.
  prompt scratch_prompt(const completion_request& req, doc_state& scratch);

  std::optional<calibrated_gate> calibrated_gate_;
  std::unique_ptr<lm_backend> backend_;
  completion_settings s_;
  fim_format fmt_;
  chunk_tokenizer tok_;
  prompt_builder builder_;
  std::unique_ptr<kv_pool> pool_;
  std::unique_ptr<candidate_forks> forks_;  // candidates 2..n, made on first use (rebuilt with pool_)
  type_through_cache tt_;
  std::unordered_map<std::string, doc_state> docs_;
  std::unordered_map<std::string, prefetched> prefetched_;
  std::deque<task> tasks_;
  std::unique_ptr<next_edit_engine> next_edit_;  // on *pool_ (rebuilt with it)
  std::string model_name_;
  backend_loader draft_loader_;
  std::unique_ptr<model_drafter> draft_;
  std::string draft_path_;  // the draft_model setting last loaded (or tried)
  double prefill_tps_ = 0;  // moving average of prompt tokens per second
  double step_ms_ = 0;      // moving average of a single-token decode step
  double tpot_ms_ = 0;      // moving average of the time per output token (speculation included)
  uint64_t completions_ = 0;
  int64_t background_paused_ = 0;  // background steps paused under load since the last answer
  int sessions_ = 1;        // editor sessions sharing this pipeline (sessions_changed)
};

}  // namespace qf::server::completion
