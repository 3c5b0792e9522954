// The settings schema and the one parser driven by it (see settings.h). The
// markdown rendering of the schema is in settings_markdown.cpp.
#include "server/core/settings.h"

#include <boost/json.hpp>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <map>

#include "server/routing/source_registry.h"

namespace qf::server {

namespace json = boost::json;

namespace {

// Field accessors: captureless lambdas, so each key is one line of the table.
#define QF_FIELD(member) +[](quickfill_settings& s) { return &s.member; }

std::vector<setting_spec> make_schema() {
  using S = setting_spec;
  const std::vector<std::string_view> devices{"auto", "cpu", "cuda"};
  return {
      // ---- Server ----
      S{"model", "Server", QF_FIELD(server.model), 0, 0, {},
        "GGUF model path, or the name of a model pulled with `quickfill model pull` (empty: not set). `--model` on "
        "the command line wins; without either, the bundled "
        "`quickfill-tiny-code.gguf` is looked up in `<exe dir>/../share/quickfill/models/`, then in the source "
        "tree's `models/`. Changing or removing it reloads the model.", setting_trust::bare_name},
      S{"completion.autoDeadlineMs", "Server", QF_FIELD(server.auto_deadline_ms), 1, 600000, {},
        "Budget in ms (from arrival) of a completion triggered while typing; the answer is whatever exists by then."},
      S{"completion.explicitDeadlineMs", "Server", QF_FIELD(server.explicit_deadline_ms), 1, 600000, {},
        "Budget in ms of a completion the user asked for."},
      S{"completion.contextDocuments", "Server", QF_FIELD(server.context_documents), 0, 64, {},
        "How many other open documents (most recently used first) are passed to the pipeline as context."},
      S{"workspace.index", "Server", QF_FIELD(server.workspace_index), 0, 0, {},
        "Index the definitions and imports of the workspace's source files in the background (lowest priority; "
        "`.gitignore` respected; cached under `$XDG_CACHE_HOME/quickfill`) so that prompts can include definitions "
        "from other files. Off: nothing is walked or parsed beyond the open documents' syntax trees."},
      S{"slo.budgetMs", "Server", QF_FIELD(server.slo_budget_ms), 1, 600000, {},
        "Latency SLO: the reply time (from arrival) an automatic completion should meet. The default leaves 100 ms "
        "over `completion.autoDeadlineMs` for building and sending the reply. `quickfill report` shows the "
        "compliance over the last hour and day."},
      S{"slo.target", "Server", QF_FIELD(server.slo_target), 0.5, 0.9999, {},
        "Latency SLO: the share of answered automatic completions that should meet `slo.budgetMs`; the error "
        "budget is the rest, and the burn rate is the bad share over it (1 spends it exactly)."},
      // ---- Daemon ----
      S{"daemon.enabled", "Daemon", QF_FIELD(server.daemon_enabled), 0, 0, {},
        "Share one resident model between all editor windows through the per-user daemon (docs/daemon.md). Read "
        "from the user config file and `initializationOptions` only, when `quickfill --stdio` starts: false keeps "
        "the model in the editor's own process (as `--no-daemon` or `QUICKFILL_NO_DAEMON=1` do); a later "
        "`didChangeConfiguration` does not switch a running session."},
      S{"daemon.idleTimeoutSeconds", "Daemon", QF_FIELD(server.daemon_idle_timeout_s), 0, 604800, {},
        "Seconds the daemon keeps the model resident after its last client has gone (0: exit at once). Applies "
        "when this editor starts the daemon; a daemon already running keeps its own. `--idle-timeout` wins."},
      S{"daemon.http", "Daemon", QF_FIELD(server.daemon_http), 0, 0, {},
        "`HOST:PORT` (a loopback address, e.g. `127.0.0.1:8012`): a daemon this editor starts also serves the "
        "llama-server-compatible HTTP endpoint of `quickfill serve` (`/infill`, `/v1/completions`) from the engines "
        "its windows share, for llama.vim, llama.vscode or Continue, and stays up while it does (docs/daemon.md). "
        "Empty: no HTTP. Read from the user config file only; a daemon already running keeps its own.",
        setting_trust::user_file},
      // ---- Engine ----
      S{"device", "Engine", QF_FIELD(engine.device), 0, 0, devices,
        "Where the model runs: `auto` takes the CUDA backend when the binary has it and a GPU is present, otherwise "
        "the CPU (the log says why); `cpu` and `cuda` force one (`cuda` without a GPU fails to load, with that reason "
        "shown). Applies when the model is (re)loaded; `--device` on the command line wins."},
      // ---- Prompt ----
      S{"completion.prefixTokens", "Prompt", QF_FIELD(completion.prefix_tokens), 0, 32768, {},
        "Token budget of the lines before the cursor line. The window's first line stays put while the window fits, "
        "then slides by a quarter of the budget, so most keystrokes and most new lines keep the cached prefix. 384 "
        "tokens is about 40 lines of code: enough context for a 0.5B model, and a cold prompt of prefix + suffix "
        "stays near one second on 2 cores."},
      S{"completion.suffixTokens", "Prompt", QF_FIELD(completion.suffix_tokens), 0, 32768, {},
        "Budget of the text after the cursor. The suffix sits before the middle token, so its size is paid only when "
        "a new layout is made, not per keystroke."},
      S{"completion.extraTokens", "Prompt", QF_FIELD(completion.extra_tokens), 0, 32768, {},
        "Budget of other open files (repo-level context with `<|repo_name|>`/`<|file_sep|>` where the model has "
        "them; plain text otherwise). It comes first in the prompt, so it is computed once: a layout or document "
        "that starts with it continues it, or copies its cached cells into its own cache slot."},
      S{"completion.contextBlockTokens", "Prompt", QF_FIELD(completion.context_block_tokens), 0, 32768, {},
        "Budget of the context gathered per layout, ranked: headers of the enclosing scopes above the prefix window, "
        "signatures of identifiers used near the cursor that are defined elsewhere, recently edited or viewed chunks "
        "of other places, and recent edits as a diff. It is gathered only when a new layout is made and keeps its "
        "order across layouts, so typing costs no extra tokens per keystroke. 0 turns it off."},
      S{"completion.middleMaxTokens", "Prompt", QF_FIELD(completion.middle_max_tokens), 8, 4096, {},
        "Text typed since the last layout stays after the middle token (appending only) until it spans lines and "
        "exceeds this; then a new layout is made at the cursor line. Bounded so that a long session of typing does "
        "not drift far from the prompt format the model was trained on."},
      S{"completion.rebaseWhenIdle", "Prompt", QF_FIELD(completion.rebase_when_idle), 0, 0, {},
        "When the typed text spans lines, make the new layout in the background (in another cache slot) and switch "
        "to it once warm, so the next keystroke does not pay for the suffix."},
      S{"completion.jumpPrefixTokens", "Prompt", QF_FIELD(completion.jump_prefix_tokens), 0, 32768, {},
        "After the cursor jumps to a part of the file no cached layout covers, the first layout there holds only "
        "this many prefix tokens (and a third as many of suffix) after the context the cache already holds, so the "
        "first suggestion evaluates about 150 tokens instead of the whole prompt (about 700); the full layout "
        "follows in the background (with `rebaseWhenIdle`) and is used once warm. Until then suggestions see less "
        "of the file. 0: the full layout at once (docs/completion.md, \"Cursor jumps\")."},
      // ---- Generation ----
      S{"completion.maxTokens", "Generation", QF_FIELD(completion.max_tokens_auto), 1, 4096, {},
        "Token limit for automatic triggers (single line in most places; a line of code is rarely longer)."},
      S{"completion.maxTokensExplicit", "Generation", QF_FIELD(completion.max_tokens_explicit), 1, 4096, {},
        "Token limit when the user asks (multi-line allowed)."},
      S{"completion.multiLine", "Generation", QF_FIELD(completion.multi_line), 0, 0, {},
        "Allow multi-line completions where a block is expected: explicit invocation, an empty line, or the end of "
        "a line that opens a block (`:`, `{`, `(`, `[`, `=>`, `->`, ` do`, ` then`)."},
      S{"completion.stopRules", "Generation", QF_FIELD(completion.stop_rules), 0, 0, {},
        "Off: fixed-length generation with no line/indent rules (benchmarks). Special tokens never become text "
        "either way."},
      S{"completion.autoTriggerMidWord", "Generation", QF_FIELD(completion.auto_trigger_mid_word), 0, 0, {},
        "Whether an automatic trigger in the middle of a word with code to its right is answered. Off: such "
        "positions are almost always edits of existing code, where a completion is noise."},
      S{"completion.promptShare", "Generation", QF_FIELD(completion.prompt_share), 0.05, 1.0, {},
        "Share of the request's budget that the prompt phase may use; if the prompt is not done by then the answer "
        "is empty and `isIncomplete`, and the prompt is finished in the background. The rest is for decoding."},
      S{"completion.promptChunkTokens", "Generation", QF_FIELD(completion.prompt_chunk_tokens), 1, 4096, {},
        "Prompt tokens per engine call in a request's prompt phase. Each finished call stays cached whatever happens "
        "next; the engine stops within a layer of a cancellation, and a layer of a bigger call takes longer, so this "
        "bounds how fast a stale request lets go of the worker. Measured on our shared 2-core machine (0.5B shape, "
        "F16, heavily loaded): pp16 7.9 t/s, pp32 12.0, pp64 16.0, pp128 22.9 -- 64 keeps 70% of the batched "
        "speed."},
      S{"completion.backgroundChunkTokens", "Generation", QF_FIELD(completion.background_chunk_tokens), 1, 4096, {},
        "The same for background work (warming, rebase, prefetch), which must yield to the next keystroke quickly; "
        "half the interactive chunk halves the layer time the next keystroke may wait for, at about 3/4 of its "
        "throughput."},
      S{"completion.finishLineMs", "Generation", QF_FIELD(completion.finish_line_ms), 0, 10000, {},
        "With line rules, the last this-many milliseconds of the budget only finish the current line (no new line "
        "is begun; a half line is rarely useful). The answer is still due by the deadline; multi-line answers cut "
        "at it keep whole lines only."},
      // ---- Speed ----
      S{"completion.typeThrough", "Speed", QF_FIELD(completion.type_through), 0, 0, {},
        "Characters typed that match the start of the last suggestion are answered from it at once, without the "
        "model."},
      S{"completion.inflightReuse", "Speed", QF_FIELD(completion.inflight_reuse), 0, 0, {},
        "A keystroke that types what the running generation has already produced keeps that generation going "
        "(the stale request is still answered as cancelled); the next request is answered from its suggestion "
        "by type-through, without decoding again. An edit that diverges cancels it as any edit does. Needs "
        "completion.typeThrough."},
      S{"completion.speculative", "Speed", QF_FIELD(completion.speculative), 0, 0, {},
        "Prompt-lookup speculative decoding: drafts copied from the prompt after an n-gram match, verified in one "
        "batch. Output is identical to plain greedy decoding."},
      S{"completion.draftMax", "Speed", QF_FIELD(completion.draft_max), 1, 64, {},
        "Longest draft. Verification cost grows with the draft and acceptance falls along it; the default "
        "has not been tuned by a measurement."},
      S{"completion.draftNgram", "Speed", QF_FIELD(completion.draft_ngram), 1, 16, {},
        "Length of the n-gram matched in the history (shorter ones are tried when it has no match)."},
      S{"completion.draftModel", "Speed", QF_FIELD(completion.draft_model), 0, 0, {},
        "GGUF path of a smaller model of the same family (the same tokenizer, e.g. a 0.5B for a 1.5B) that drafts "
        "for speculative decoding in place of prompt lookup, which it falls back to when it has no confident token. "
        "Output stays identical to plain greedy decoding. It is loaded with the model (and again when this changes), "
        "keeps one KV sequence of its own and catches up with a new prompt in the background; a model with another "
        "tokenizer is refused (logged). Empty: prompt lookup only.", setting_trust::bare_name},
      S{"completion.draftMinProb", "Speed", QF_FIELD(completion.draft_min_prob), 0.0, 1.0, {},
        "The draft model drafts while its next token's probability is at least this (0: always `draftMax` tokens). "
        "Not tuned by a measurement."},
      S{"completion.prefetch", "Speed", QF_FIELD(completion.prefetch), 0, 0, {},
        "After answering, compute the completion that would follow if the suggestion were accepted (background, low "
        "priority). Off by default: it costs a full generation per answer, which on 2 cores competes with the next "
        "keystroke's prompt warming."},
      S{"completion.degrade", "Speed", QF_FIELD(completion.degrade), 0, 0, {},
        "Under load (a shared engine busy with other windows' work, or a slow machine): when a request's estimate "
        "(prompt tokens left after the cache's reuse and `maxTokens` at the engine's recent rates, plus the wait for "
        "others' tokens) breaks its deadline, decode one candidate instead of several and cut `maxTokens` to what "
        "fits (not below `completion.degradeMinTokens`); background work and prefetch wait while others' work "
        "runs; automatic requests go to `routes.underLoad` when it names a source. Each is counted in "
        "`quickfill/stats` (`degraded`) and shown by `quickfill/explainCompletion` (docs/completion.md)."},
      S{"completion.degradeMinTokens", "Speed", QF_FIELD(completion.degrade_min_tokens), 1, 4096, {},
        "Under load, a token limit is never cut below this (nor above the trigger's own limit)."},
      S{"completion.degradeMarginMs", "Speed", QF_FIELD(completion.degrade_margin_ms), 0, 600000, {},
        "Under load, the estimate must fit the time left to the deadline less this margin (the estimate's error and "
        "the reply's own time). The default aims a degraded request's answer at 20 ms before its deadline "
        "(`completion.autoDeadlineMs`, 400 ms), inside the SLO budget (`slo.budgetMs`, 500 ms)."},
      // ---- Sampling and candidates ----
      S{"completion.temperature", "Sampling", QF_FIELD(completion.sampling_auto.temperature), 0, 5, {},
        "Sampling temperature of automatic triggers; 0 is greedy decoding (the most likely token each step)."},
      S{"completion.temperatureExplicit", "Sampling", QF_FIELD(completion.sampling_explicit.temperature), 0, 5, {},
        "Sampling temperature of explicit invocations. With several candidates the first is the greedy one and the "
        "others are drawn at this temperature; 0 makes them all greedy, so one is decoded."},
      S{"completion.topK", "Sampling", QF_FIELD(completion.sampling_auto.top_k), 0, 1 << 20, {},
        "Automatic triggers, when sampling: draw only among the K most likely tokens (0: off)."},
      S{"completion.topKExplicit", "Sampling", QF_FIELD(completion.sampling_explicit.top_k), 0, 1 << 20, {},
        "Explicit invocations: the same."},
      S{"completion.topP", "Sampling", QF_FIELD(completion.sampling_auto.top_p), 0.01, 1, {},
        "Automatic triggers, when sampling: draw only from the most likely tokens whose probabilities add up to P "
        "(1: off)."},
      S{"completion.topPExplicit", "Sampling", QF_FIELD(completion.sampling_explicit.top_p), 0.01, 1, {},
        "Explicit invocations: the same."},
      S{"completion.minP", "Sampling", QF_FIELD(completion.sampling_auto.min_p), 0, 1, {},
        "Automatic triggers, when sampling: drop tokens less likely than P times the most likely one (0: off)."},
      S{"completion.minPExplicit", "Sampling", QF_FIELD(completion.sampling_explicit.min_p), 0, 1, {},
        "Explicit invocations: the same."},
      S{"completion.repeatPenalty", "Sampling", QF_FIELD(completion.sampling_auto.repeat_penalty), 1, 10, {},
        "Automatic triggers: divide the logits of tokens among the last 64 of prompt and output by this (1: off). "
        "Anything but 1 reads whole logits rows on the host and turns off speculative decoding."},
      S{"completion.repeatPenaltyExplicit", "Sampling", QF_FIELD(completion.sampling_explicit.repeat_penalty), 1, 10,
        {}, "Explicit invocations: the same."},
      S{"completion.candidates", "Sampling", QF_FIELD(completion.sampling_auto.candidates), 1, 16, {},
        "Candidates of an automatic trigger (with a temperature above 0). They continue the one evaluated prompt; "
        "each costs its own decoding."},
      S{"completion.candidatesExplicit", "Sampling", QF_FIELD(completion.sampling_explicit.candidates), 1, 16, {},
        "Candidates of an explicit invocation, returned as several items (the editor cycles through them) in order "
        "of confidence, duplicates dropped. They share the prompt's evaluation and split the deadline."},
      S{"completion.seed", "Sampling", QF_FIELD(completion.seed), 0, 2147483647, {},
        "Sampler seed: candidate i draws with seed + i, so the same prompt and settings give the same candidates."},
      S{"completion.minConfidence", "Sampling", QF_FIELD(completion.sampling_auto.min_confidence), -100, 0, {},
        "Confidence gate of automatic triggers: a suggestion whose mean token log-probability is below this is not "
        "shown (-100: off). Measured on the bundled model, -1.8 dropped about 38% of its suggestions and kept 18 of "
        "the 19 that resembled the real continuation (docs/benchmarks.md, \"Confidence gate\"); scores depend on "
        "the model: when this key is not set, a gate calibrated for the model by `quickfill eval --calibrate` "
        "(`<model>.gate.json`) is used instead of the default (docs/completion.md)."},
      S{"completion.minConfidenceExplicit", "Sampling", QF_FIELD(completion.sampling_explicit.min_confidence), -100,
        0, {}, "Confidence gate of explicit invocations (-100: off; off by default: the user asked)."},
      // ---- Cache ----
      S{"completion.cacheMiB", "Cache", QF_FIELD(completion.cache_mib), 1, 1 << 20, {},
        "Memory budget of the KV caches. A slot costs `contextTokens` x KV bytes per token (12 KiB for "
        "Qwen2.5-Coder-0.5B in F16: 24 MiB at 2048 tokens); the number of slots is bounded by this budget."},
      S{"completion.cacheSlots", "Cache", QF_FIELD(completion.cache_slots), 1, 64, {},
        "Most KV sequences kept for each editor window: one per recently used document plus one for background "
        "re-layouts. The daemon's engine, shared by several windows, keeps this many for each window using it, "
        "within `cacheMiB`. Slots are reused by longest common prefix and evicted least recently used."},
      S{"completion.contextTokens", "Cache", QF_FIELD(completion.context_tokens), 256, 1 << 20, {},
        "Size of each slot (capped by the model's training context). Must hold extra + prefix + suffix + middle + "
        "generation; the token budgets are scaled down to fit a smaller one."},
      S{"completion.reuseShiftedChunks", "Cache", QF_FIELD(completion.reuse_shifted_chunks), 0, 0, {},
        "After tokens were deleted in the middle of a cached prompt (a line removed above the cursor, the prefix "
        "window sliding), shift the cached tokens after the deletion into place (re-rotating K) instead of "
        "evaluating them again. It saves almost the whole prompt (measured: 1 token evaluated instead of 313), but "
        "it is approximate -- those tokens' K/V were computed with the deleted tokens still in front -- and the "
        "greedy output matched a cold evaluation in only 4 of 8 cases on our synthetic 0.5B model and 19 of 30 on "
        "the bundled one (docs/completion.md). It does nothing for cursor jumps (no cached run moved left). Off by "
        "default so that a suggestion never depends on the edit history; turn it on where prompt evaluation is "
        "slow."},
      S{"completion.minChunkTokens", "Cache", QF_FIELD(completion.min_chunk_tokens), 4, 1 << 20, {},
        "Smallest cached run worth shifting."},
      // ---- Next edit (server/completion/next_edit/next_edit.h) ----
      S{"nextEdit.format", "Next edit", QF_FIELD(completion.next_edit_format), 0, 0,
        {"auto", "zeta", "sweep", "instinct", "off"},
        "Prompt format of `quickfill/nextEdit`: `auto` picks it from the model's name (GGUF `general.name` and "
        "file name: Zeta, Sweep next-edit, Instinct) and answers no edits for other models; `zeta`, `sweep` or "
        "`instinct` forces one; "
        "`off` turns next-edit prediction off."},
      S{"nextEdit.regionLines", "Next edit", QF_FIELD(completion.next_edit_region_lines), 1, 200, {},
        "Lines of the editable region the model rewrites, centred on the cursor (Sweep trains on 21-line windows)."},
      S{"nextEdit.contextLines", "Next edit", QF_FIELD(completion.next_edit_context_lines), 0, 200, {},
        "Lines shown above and below the editable region (Zeta's excerpt)."},
      S{"nextEdit.maxTokens", "Next edit", QF_FIELD(completion.next_edit_max_tokens), 16, 8192, {},
        "Token limit of one region's rewrite (also at most twice the region's tokens plus 32)."},
      S{"nextEdit.historyBytes", "Next edit", QF_FIELD(completion.next_edit_history_bytes), 0, 1 << 20, {},
        "Bytes of recent edits (all documents, newest first) put in the prompt."},
      // ---- Routing (server/routing/, docs/routing.md) ----
      S{"sources", "Routing", QF_FIELD(routing.sources_json), 0, 0, {},
        "Completion sources: an array of `{\"name\", \"kind\", ...members of the kind, \"quota\": "
        "{\"tokensPerHour\", \"tokensPerDay\"}}`; the members are in \"Sources and routes\" below. Empty: one "
        "implicit local source named `local`, built from the model settings above (the behaviour without routing). "
        "A value that is not accepted is an error naming its path (`sources[1].maxTokens`) and the routing in force "
        "is kept.", setting_trust::user_file},
      S{"routes", "Routing", QF_FIELD(routing.routes_json), 0, 0, {},
        "Which sources answer: `{\"automatic\": [names], \"explicit\": [names]}`, tried in order; the next is tried "
        "when one fails, is down, has spent its quota, or is slower (recent median) than the time left. A missing "
        "route takes every source in the order of `sources`. `\"underLoad\": [names]` (optional) names faster sources "
        "that automatic triggers try first when the automatic route's first source estimates it would break their "
        "deadline (`completion.degrade`)."},
      S{"audit.path", "Routing", QF_FIELD(routing.audit_path), 0, 0, {},
        "JSON Lines file (mode 0600) with one line per call to a non-local source: time, source, SHA-256 of the "
        "document URI, token counts, status, latency. Empty: no audit log.", setting_trust::user_file},
      S{"audit.includeCode", "Routing", QF_FIELD(routing.audit_include_code), 0, 0, {},
        "Also write the code around the cursor and the suggestions into each audit line. Off: no code text is "
        "ever written.", setting_trust::user_file},
      S{"routing.memoryReserveMiB", "Routing", QF_FIELD(routing.memory_reserve_mib), 0, 1 << 24, {},
        "Memory left free when a further local model is loaded: it is loaded only when its weights + KV cache + "
        "this fit in MemAvailable (and in the GPU's free memory on CUDA); docs/routing.md gives the math."},
      // ---- Privacy (privacy_filter.h, docs/security.md) ----
      S{"privacy.exclude", "Privacy", QF_FIELD(privacy.exclude), 0, 0, {},
        "Globs of files that never get completions and never reach a prompt (open files, recent chunks, edit "
        "history, the workspace index, remote sources, `quickfill/explainCompletion`, the audit log). Matched on "
        "the absolute path and on the path relative to each workspace folder, as in `.gitignore`: a pattern without "
        "`/` matches a file or folder name at any depth, `**` spans folders, `~/` is the home folder. The default "
        "covers environment files, keys and the credential files of common CLIs (docs/security.md).",
        setting_trust::additive},
      S{"privacy.disabledLanguages", "Privacy", QF_FIELD(privacy.disabled_languages), 0, 0, {},
        "LSP language ids (`markdown`, `plaintext`, ...) whose documents are treated like excluded files: no "
        "completions, never in a prompt.",
        setting_trust::additive},
  };
}

#undef QF_FIELD

using schema::format_number;
using schema::json_text;
using schema::shown;

// At most `limit` bytes of s, cut at a UTF-8 character boundary.
std::string clip(std::string s, std::size_t limit = 80) {
  if (s.size() <= limit) return s;
  std::size_t n = limit;
  while (n > 0 && (static_cast<unsigned char>(s[n]) & 0xC0) == 0x80) --n;
  s.resize(n);
  return s + "...";
}

// An empty array stands for an empty object: some encoders (Lua's) cannot tell them apart.
bool is_empty_array(const json::value& v) { return v.is_array() && v.get_array().empty(); }

// Whether some key of the schema lies under `prefix` ("completion").
bool is_group(std::string_view prefix) {
  for (const setting_spec& s : settings_schema())
    if (s.key.size() > prefix.size() && s.key.substr(0, prefix.size()) == prefix && s.key[prefix.size()] == '.')
      return true;
  return false;
}

bool is_key(std::string_view key) {
  for (const setting_spec& s : settings_schema())
    if (s.key == key) return true;
  return false;
}

struct given_value {
  const json::value* value = nullptr;
  bool nested = false;
};

// Collects the members of `o` by dotted key: nested objects of known groups
// are walked into; flat members ("completion.maxTokens") are taken as they are.
void collect(const json::object& o, const std::string& prefix, bool nested, std::map<std::string, given_value>& out,
             std::vector<settings_problem>& problems) {
  for (const auto& [k, v] : o) {
    const std::string key = prefix + std::string(k);
    if (is_key(key)) {
      given_value& g = out[key];
      if (!g.value || nested || !g.nested) g = given_value{&v, nested};
    } else if (is_group(key)) {
      if (v.is_object()) {
        collect(v.get_object(), key + ".", true, out, problems);
      } else if (!v.is_null() && !is_empty_array(v)) {
        problems.push_back({settings_problem::severity::warning,
                            key + ": " + shown(v) + " is not an object; the settings under it take their defaults"});
      }
    } else {
      problems.push_back({settings_problem::severity::warning, "unknown setting " + clip(key) + " (ignored)"});
    }
  }
}

// Applies one given value; false when it is not accepted. Every value is
// checked by the one settings validator (completion/api/setting_schema.h)
// against the key's member_schema.
bool apply(const setting_spec& spec, const json::value& v, quickfill_settings& s) {
  if (auto* f = std::get_if<setting_spec::json_field>(&spec.field)) {
    // Read as a whole by its owner (routing_settings.h); here only its shape.
    const bool want_array = spec.type_name() == "array";
    if (want_array ? !v.is_array() : !(v.is_object() || is_empty_array(v))) return false;
    *(*f)(s) = is_empty_array(v) && !want_array ? json::value(json::object{}) : v;
    return true;
  }
  const std::optional<json::value> checked = schema::validate(spec.member(), v, std::string(spec.key), nullptr);
  if (!checked) return false;
  if (auto* f = std::get_if<setting_spec::bool_field>(&spec.field)) *(*f)(s) = checked->get_bool();
  else if (auto* f = std::get_if<setting_spec::int_field>(&spec.field)) *(*f)(s) = static_cast<int>(checked->get_int64());
  else if (auto* f = std::get_if<setting_spec::number_field>(&spec.field)) *(*f)(s) = checked->get_double();
  else if (auto* f = std::get_if<setting_spec::string_field>(&spec.field)) *(*f)(s) = std::string(checked->get_string());
  // An array of strings: items that are not strings (or empty) are dropped, never the whole list: a
  // layered list (setting_trust::additive) keeps the user's items whatever the editor adds.
  else if (auto* f = std::get_if<setting_spec::string_list_field>(&spec.field))
    *(*f)(s) = schema::get_strings(json::object{{"v", *checked}}, "v");
  return true;
}

}  // namespace

const std::vector<setting_spec>& settings_schema() {
  static const std::vector<setting_spec> schema = make_schema();
  return schema;
}

std::string setting_spec::type_name() const {
  switch (field.index()) {
    case 0: return "boolean";
    case 1: return "integer";
    case 2: return "number";
    case 3: return "string";
    case 5: return "array";
    default: break;
  }
  quickfill_settings d;
  return (*std::get<setting_spec::json_field>(field))(d)->is_array() ? "array" : "object";
}

schema::member_schema setting_spec::member() const {
  schema::member_schema m;
  m.name = key;
  m.min = min;
  m.max = max;
  m.choices = choices;
  m.doc = doc;
  switch (field.index()) {
    case 0: m.type = schema::value_type::boolean; break;
    case 1: m.type = schema::value_type::integer; break;
    case 2: m.type = schema::value_type::number; break;
    case 3: m.type = schema::value_type::string; break;
    case 4:
      if (type_name() == "array") {
        m.type = schema::value_type::object_list;
        m.expected = "an array of source objects";
      } else {
        m.type = schema::value_type::object;
        m.expected = "an object of routes";
      }
      break;
    default:
      m.type = schema::value_type::string_list;
      m.drop_bad_items = true;
      break;
  }
  return m;
}

std::string setting_spec::accepted(bool markdown) const {
  if (markdown && field.index() == 4)
    return type_name() == "array" ? "source objects (below)" : "`automatic`, `explicit`: arrays of names (below)";
  return schema::accepted(member(), markdown);
}

std::string setting_spec::default_json() const {
  quickfill_settings d;
  return std::visit([&](auto f) { return json_text(json::value_from(*f(d))); }, field);
}

bool has_settings(const json::value& payload) {
  if (payload.is_null() || is_empty_array(payload)) return false;
  if (!payload.is_object()) return true;  // not readable: parse_settings reports it
  const json::object& o = payload.get_object();
  if (o.contains("quickfill")) return true;
  // The bare form: only when it names at least one of our keys. `{}` or other
  // servers' sections alone (eglot sends `{}` when it connects) carry nothing.
  for (const auto& [k, v] : o)
    if (is_key(k) || is_group(k)) return true;
  return false;
}

namespace {

// The settings object of a payload ({"quickfill": {...}} or the bare object)
// collected by dotted key into *given; false (with the error in *problems)
// when the payload cannot be read.
bool collect_payload(const json::value& payload, std::map<std::string, given_value>& given,
                     std::vector<settings_problem>& problems) {
  const json::value* obj = &payload;
  if (payload.is_object()) {
    if (const json::value* q = payload.get_object().if_contains("quickfill")) obj = q;
  }
  static const json::value empty = json::object{};
  if (obj->is_null() || is_empty_array(*obj)) obj = &empty;
  if (!obj->is_object()) {
    problems.push_back({settings_problem::severity::error,
                        "the quickfill settings must be a JSON object, got " + shown(*obj) +
                            "; the settings are unchanged"});
    return false;
  }
  collect(obj->get_object(), "", false, given, problems);
  return true;
}

// Applies the collected values to out.values (a key not given, or null, takes its default).
void apply_given(const std::map<std::string, given_value>& given, parsed_settings& out) {
  for (const setting_spec& spec : settings_schema()) {
    auto it = given.find(std::string(spec.key));
    if (it == given.end() || it->second.value->is_null()) continue;  // default
    const bool applied = apply(spec, *it->second.value, out.values);
    // A gate the user set wins over the model's calibrated one (completion/gate_file.h).
    if (applied && spec.key == "completion.minConfidence")
      out.values.completion.sampling_auto.min_confidence_given = true;
    if (applied && spec.key == "completion.minConfidenceExplicit")
      out.values.completion.sampling_explicit.min_confidence_given = true;
    if (!applied) {
      if (std::holds_alternative<setting_spec::json_field>(spec.field)) {
        out.problems.push_back({settings_problem::severity::error,
                                std::string(spec.key) + ": " + shown(*it->second.value) + " is not accepted (expected " +
                                    spec.accepted(false) + "); the routing in force is kept"});
        out.values.routing.keep_previous = true;
        continue;
      }
      out.problems.push_back({settings_problem::severity::warning,
                              std::string(spec.key) + ": " + shown(*it->second.value) + " is not accepted (expected " +
                                  spec.accepted(false) + "); using the default " +
                                  spec.default_json()});
    }
  }
  // The routing section is read as a whole: a value that cannot be read keeps the routing in force.
  std::string why;
  if (!out.values.routing.keep_previous && !routing::parse_routing(out.values.routing, routing::builtin_kinds(), &why)) {
    out.problems.push_back({settings_problem::severity::error, why + "; the routing in force is kept"});
    out.values.routing.keep_previous = true;
  }
}

const setting_spec* find_spec(std::string_view key) {
  for (const setting_spec& s : settings_schema())
    if (s.key == key) return &s;
  return nullptr;
}

}  // namespace

parsed_settings parse_settings(const json::value& payload) {
  parsed_settings out;
  std::map<std::string, given_value> given;
  if (!collect_payload(payload, given, out.problems)) {
    out.usable = false;
    return out;
  }
  apply_given(given, out);
  return out;
}

bool is_bare_model_name(std::string_view name) {
  return !name.empty() && name.find_first_of("/\\~") == std::string_view::npos && name.front() != '.';
}

parsed_settings parse_layered_settings(const json::value& user, const json::value& editor,
                                       std::vector<std::string>* refused) {
  parsed_settings out;
  // The user layer: its problems name the file; unreadable, none of its values are used.
  std::map<std::string, given_value> given;
  if (!user.is_null()) {
    std::vector<settings_problem> problems;
    if (!collect_payload(user, given, problems)) {
      given.clear();
      problems.back().message = "the quickfill settings must be a JSON object, got " + shown(user) +
                                "; none of its values are used";
    }
    for (settings_problem& p : problems) out.problems.push_back({p.level, "user config file: " + p.message});
  }
  std::map<std::string, given_value> editor_given;
  if (!collect_payload(editor, editor_given, out.problems)) {
    out.usable = false;
    return out;
  }
  std::vector<json::value> merged;  // additive arrays: both layers' elements (given_value points into it)
  merged.reserve(editor_given.size());
  for (const auto& [key, g] : editor_given) {
    const setting_spec* spec = find_spec(key);
    if (!spec || g.value->is_null()) continue;  // null: not given, the user layer's value stays
    switch (spec->trust) {
      case setting_trust::any:
        given[key] = g;
        break;
      case setting_trust::user_file:
        // Asking for the default (an empty list, no file) asks for nothing.
        if (json_text(*g.value) != spec->default_json() && refused) refused->push_back(key);
        break;
      case setting_trust::bare_name:
        if (g.value->is_string() && g.value->get_string().empty()) break;  // unset: the user layer's value stays
        if (g.value->is_string() && !is_bare_model_name(g.value->get_string())) {
          if (refused) refused->push_back(key);
          break;
        }
        given[key] = g;  // a bare name (or a value of the wrong type, which apply() reports)
        break;
      case setting_trust::additive: {
        // Added to the user layer's list (or the default one), never replacing it.
        if (!g.value->is_array()) {
          out.problems.push_back({settings_problem::severity::warning,
                                  key + ": " + shown(*g.value) + " is not accepted (expected " +
                                      spec->accepted(false) + "); ignored"});
          break;
        }
        auto it = given.find(key);
        json::value base = it != given.end() && it->second.value->is_array() ? *it->second.value
                                                                              : json::parse(spec->default_json());
        json::array both = base.is_array() ? base.get_array() : json::array{};
        for (const json::value& v : g.value->get_array()) both.push_back(v);
        merged.emplace_back(std::move(both));
        given[key] = given_value{&merged.back(), true};
        break;
      }
    }
  }
  apply_given(given, out);
  if (refused) {  // in schema order, as the reference lists them
    auto rank = [](const std::string& k) { return find_spec(k) - settings_schema().data(); };
    std::stable_sort(refused->begin(), refused->end(),
                     [&](const std::string& a, const std::string& b) { return rank(a) < rank(b); });
  }
  return out;
}

bool step_graphs_from_environment() {
  const char* v = std::getenv("QUICKFILL_STEP_GRAPHS");
  return !(v && std::string_view(v) == "0");
}

}  // namespace qf::server
