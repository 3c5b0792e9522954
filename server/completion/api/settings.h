// Settings of the completion pipeline (the "completion" object of the
// "quickfill" settings), as a typed section. Every field has a default chosen
// for a 2-core CPU and a 0.5B model. The pipeline never reads JSON: the
// server's settings schema (server/core/settings.h) parses and validates the
// settings object, reports problems to the client, and hands this section
// over; docs/configuration.md (generated from that schema) explains each key.
#pragma once

#include <cstdint>
#include <string>

namespace qf::server::completion {

// How one request class (automatic triggers, explicit invocations) decodes.
struct sampling_settings {
  double temperature = 0;       // <= 0: greedy
  int top_k = 40;               // <= 0: off
  double top_p = 0.95;          // >= 1: off
  double min_p = 0.05;          // <= 0: off
  double repeat_penalty = 1.0;  // 1: off
  int candidates = 1;           // n: sequences decoded from the one evaluated prompt
  double min_confidence = -100; // the confidence gate: a lower mean token log-probability is not shown
  // The user set min_confidence (settings or config file): it wins over a
  // calibrated gate file next to the model (gate_file.h).
  bool min_confidence_given = false;
  bool operator==(const sampling_settings&) const = default;
};

struct completion_settings {
  // Every member has a default ({} where none is needed): initializers may name
  // only what they set (GCC -Wextra warns about a member left out otherwise).
  // Prompt token budgets.
  int prefix_tokens = 384;      // lines before the cursor line
  int suffix_tokens = 96;       // text after the cursor
  int extra_tokens = 512;       // other open files (repo-level context)
  int context_block_tokens = 384;  // scopes, definitions, recent chunks, edits (context_block.h)
  int middle_max_tokens = 96;   // text typed since the last layout before a forced re-layout
  bool rebase_when_idle = true; // move typed text into the prefix in the background
  int jump_prefix_tokens = 96;  // after a cursor jump, a first layout this small; the full one in the background (0: off)
  // Generation.
  int max_tokens_auto = 32;     // token limit for automatic triggers
  int max_tokens_explicit = 128;
  bool multi_line = true;       // allow multi-line where a block is expected
  bool stop_rules = true;       // off: fixed-length generation (benchmarks)
  bool auto_trigger_mid_word = false;  // complete automatically mid-word with code to the right
  double prompt_share = 0.6;    // share of the deadline the prompt phase may use
  int finish_line_ms = 60;      // past the deadline, keep going this long to end the line
  int prompt_chunk_tokens = 64;      // tokens per eval call in a request's prompt phase
  int background_chunk_tokens = 32;  // the same for background work (bounds preemption latency)
  // Speed.
  bool type_through = true;
  bool inflight_reuse = true;   // keep a generation the user types along with (inflight.h; needs type_through)
  bool speculative = true;      // prompt-lookup drafts
  int draft_max = 8;            // tokens per draft
  int draft_ngram = 3;          // n-gram size matched in the prompt
  std::string draft_model{};    // GGUF of a smaller model of the same family ("" = prompt lookup only)
  double draft_min_prob = 0.5;  // the draft model drafts while its token's probability is at least this
  bool prefetch = false;        // after answering, compute the continuation of the suggestion
  // Under load (load_budget.h): when a request's estimate breaks its deadline,
  // fewer candidates and fewer tokens; background work waits for others' work.
  bool degrade = true;
  int degrade_min_tokens = 8;   // a shortened token limit is never below this
  int degrade_margin_ms = 20;   // the estimate must fit the time left less this
  // Sampling and candidates, per request class (sampling.h).
  // The automatic gate -1.8 is measured on the bundled model (docs/benchmarks.md, "Confidence gate").
  sampling_settings sampling_auto{.min_confidence = -1.8};
  sampling_settings sampling_explicit{.temperature = 0.7, .candidates = 3};
  int seed = 0;                 // sampler seed (candidate i draws with seed + i)
  // Cache.
  int cache_mib = 256;          // KV memory budget for all slots together
  int cache_slots = 3;          // at most this many KV sequences
  int context_tokens = 2048;    // n_ctx of each slot
  bool reuse_shifted_chunks = false; // move_range reuse after a deletion mid-prompt (approximate)
  int min_chunk_tokens = 64;    // smallest chunk worth shifting
  // Next-edit prediction (next_edit.h).
  std::string next_edit_format = "auto";  // auto | zeta | sweep | off
  int next_edit_region_lines = 21;        // editable region, centred on the cursor
  int next_edit_context_lines = 8;        // excerpt lines around the region (zeta)
  int next_edit_max_tokens = 512;         // limit of one region's rewrite
  int next_edit_history_bytes = 2048;     // recent edits in the prompt
  bool operator==(const completion_settings&) const = default;  // the daemon reconfigures a shared engine only on a difference
};

// Shrinks the token budgets so that a full prompt plus generation fits a
// context of n_ctx tokens (small models have short contexts): the limits for
// generated and typed-ahead text are capped at a quarter of the context each,
// and the prefix/suffix/extra/context-block budgets are scaled down together, keeping their
// proportions, to what is left. Budgets that already fit are unchanged.
void fit_to_context(completion_settings& s, int64_t n_ctx);

}  // namespace qf::server::completion
