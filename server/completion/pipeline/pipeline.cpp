// The completion pipeline (see the header).
#include "server/completion/pipeline/pipeline.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <utility>

#include "text/lines.h"
#include "indexing/syntax_language.h"
#include "indexing/syntax_tree.h"
#include "server/completion/decode/candidates.h"
#include "server/completion/decode/generator.h"
#include "server/completion/postprocess/cleanup.h"
#include "server/completion/postprocess/stop_rules.h"
#include "server/completion/postprocess/syntax_rules.h"
#include "server/completion/postprocess/trigger.h"

namespace qf::server::completion {
namespace {

double ms_between(clock::time_point a, clock::time_point b) {
  return std::chrono::duration<double, std::milli>(b - a).count();
}

std::pair<int64_t, int64_t> line_col_of(std::string_view text, size_t off) {
  const text::line_col lc = text::line_col_of_offset(text, off);
  return {lc.line, lc.col};
}

// The settings with the token budgets fitted to the context a cache slot
// will have (the smaller of the setting and the model's own).
completion_settings fitted_settings(const completion_settings& given, const lm_backend& b) {
  completion_settings s = given;
  int64_t n_ctx = s.context_tokens;
  if (b.n_ctx_train() > 0) n_ctx = std::min<int64_t>(n_ctx, b.n_ctx_train());
  const completion_settings asked = s;
  fit_to_context(s, n_ctx);
  if (s.prefix_tokens != asked.prefix_tokens || s.max_tokens_explicit != asked.max_tokens_explicit)
    spdlog::info("completion: token budgets fitted to a context of {}: prefix {}, suffix {}, extra {}, max tokens {}",
                 n_ctx, s.prefix_tokens, s.suffix_tokens, s.extra_tokens, s.max_tokens_explicit);
  return s;
}

infer::sampler_params sampler_params_of(const sampling_settings& s, int seed) {
  infer::sampler_params p;
  p.temperature = static_cast<float>(s.temperature);
  p.top_k = s.top_k;
  p.top_p = static_cast<float>(s.top_p);
  p.min_p = static_cast<float>(s.min_p);
  p.repeat_penalty = static_cast<float>(s.repeat_penalty);
  p.seed = static_cast<uint64_t>(static_cast<uint32_t>(seed));
  return p;
}

}  // namespace

pipeline::pipeline(std::unique_ptr<lm_backend> backend, const completion_settings& settings)
    : backend_(std::move(backend)),
      s_(fitted_settings(settings, *backend_)),
      fmt_(detect_fim_format(backend_->vocab())),
      tok_(backend_->vocab()),
      builder_(fmt_, tok_, s_),
      pool_(std::make_unique<kv_pool>(*backend_, s_)) {
  spdlog::info("completion: {} FIM format '{}' ({}{}), {} KV slot(s) of {} tokens", backend_->describe(), fmt_.family,
               fmt_.has_fim ? (fmt_.order == fim_order::psm ? "PSM" : "SPM") : "prefix only",
               fmt_.repo_level() ? ", repo-level" : "", pool_->max_slots(), pool_->n_ctx());
}

pipeline::~pipeline() = default;

std::string pipeline::describe() const {
  return draft_ ? backend_->describe() + "; drafts by " + draft_->describe() : backend_->describe();
}

bool pipeline::set_draft_model(std::unique_ptr<lm_backend> draft, std::string* error) {
  draft_.reset();
  const std::string why = draft_vocab_mismatch(backend_->vocab(), draft->vocab());
  if (!why.empty()) {
    if (error) *error = why;
    return false;
  }
  draft_ = std::make_unique<model_drafter>(std::move(draft), pool_->n_ctx(), s_.draft_ngram, s_.draft_min_prob);
  spdlog::info("completion: draft model {}", draft_->describe());
  return true;
}

bool pipeline::load_draft_model(std::string* error) {
  draft_path_ = s_.draft_model;
  draft_.reset();  // free the old one before loading the next
  std::erase_if(tasks_, [](const task& t) { return t.kind == task_kind::draft_warm; });
  if (s_.draft_model.empty()) return true;
  std::string err = "no loader for draft models";
  std::unique_ptr<lm_backend> b = draft_loader_ ? draft_loader_(s_.draft_model, &err) : nullptr;
  if (b && set_draft_model(std::move(b), &err)) return true;
  err = "draft model " + s_.draft_model + " not used: " + err;
  spdlog::warn("completion: {}", err);
  if (error) *error = err;
  return false;
}

const layout* pipeline::layout_of(const std::string& key) const {
  auto it = docs_.find(key);
  return it == docs_.end() ? nullptr : &it->second.lay;
}

void pipeline::reset_caches() {
  // Layouts do not depend on the cache; keep them (same prompts before and after).
  for (auto& [uri, ds] : docs_) {
    ds.live_slot = -1;
    ds.pending_slot = -1;
    ds.pending = layout{};
    ds.pending_ready = false;
  }
  tasks_.clear();
  tt_.clear();
  prefetched_.clear();
  pool_ = std::make_unique<kv_pool>(*backend_, s_);
  pool_->set_sessions(sessions_);
  forks_.reset();
  next_edit_.reset();  // it holds the old pool
  if (draft_) draft_->resize(pool_->n_ctx());
}

void pipeline::note_prefill(const gen_outcome& out) {
  if (out.step_ms > 0) step_ms_ = step_ms_ > 0 ? 0.7 * step_ms_ + 0.3 * out.step_ms : out.step_ms;
  if (out.tpot_ms > 0) tpot_ms_ = tpot_ms_ > 0 ? 0.7 * tpot_ms_ + 0.3 * out.tpot_ms : out.tpot_ms;
  if (out.evaluated < 4 || out.prompt_eval_ms <= 0) return;
  const double tps = static_cast<double>(out.evaluated) / (out.prompt_eval_ms / 1000.0);
  prefill_tps_ = prefill_tps_ > 0 ? 0.7 * prefill_tps_ + 0.3 * tps : tps;
}

void pipeline::configure(const completion_settings& settings) {
  completion_settings next = fitted_settings(settings, *backend_);
  const bool cache_changed = next.cache_mib != s_.cache_mib || next.cache_slots != s_.cache_slots ||
                             next.context_tokens != s_.context_tokens;
  const bool layout_changed = next.prefix_tokens != s_.prefix_tokens || next.suffix_tokens != s_.suffix_tokens ||
                              next.extra_tokens != s_.extra_tokens ||
                              next.context_block_tokens != s_.context_block_tokens;
  s_ = next;  // builder_ and pool_ hold a reference to s_
  if (cache_changed) reset_caches();
  else if (layout_changed) {
    docs_.clear();
    tasks_.clear();
  }
  if (s_.draft_model != draft_path_) load_draft_model(nullptr);
  if (draft_) {
    draft_->set_min_prob(s_.draft_min_prob);
    draft_->set_ngram(s_.draft_ngram);
  }
}

void pipeline::document_closed(const std::string& key) {
  pool_->document_closed(key);
  pool_->document_closed(next_edit_engine::slot_owner(key));
  docs_.erase(key);
  tt_.forget(key);
  prefetched_.erase(key);
  std::erase_if(tasks_, [&](const task& t) { return t.key == key; });
}

void pipeline::sessions_changed(int sessions) {
  sessions_ = std::max(1, sessions);
  pool_->set_sessions(sessions_);
  for (auto& [key, ds] : docs_) {  // slots dropped by a smaller share
    if (ds.live_slot >= pool_->n_slots()) ds.live_slot = -1;
    if (ds.pending_slot >= pool_->n_slots()) ds.pending_slot = -1;  // a pending layout adopted is evaluated again
  }
}

void pipeline::queue(task t) {
  drop_tasks(t.key, t.kind);
  tasks_.push_back(std::move(t));
  // Finishing prompts first, then re-basing, then prefetching.
  std::stable_sort(tasks_.begin(), tasks_.end(),
                   [](const task& a, const task& b) { return static_cast<int>(a.kind) < static_cast<int>(b.kind); });
}

void pipeline::drop_tasks(const std::string& key, task_kind kind) {
  std::erase_if(tasks_, [&](const task& t) { return t.key == key && t.kind == kind; });
}

completion_result pipeline::complete(const completion_request& req, const cancel_token& cancel) {
  completion_result res;
  const auto t0 = clock::now();
  res.metrics.queue_ms = req.received.time_since_epoch().count() ? ms_between(req.received, t0) : 0.0;
  try {
    run(req, cancel, res);
  } catch (const std::exception& e) {
    spdlog::warn("completion failed for {}: {}", req.uri, e.what());
    res.items.clear();
    res.incomplete = true;
  }
  const auto start = req.received.time_since_epoch().count() ? req.received : t0;
  res.metrics.total_ms = ms_between(start, clock::now());
  res.metrics.degraded.background_paused = std::exchange(background_paused_, 0);
  if (++completions_ % 1024 == 0)
    spdlog::info("completion: {} requests; chunk cache {} entries, {:.2f} MiB (bounds {} entries, {:.0f} MiB), "
                 "{} hits, {} misses",
                 completions_, tok_.entries(), static_cast<double>(tok_.bytes()) / (1 << 20),
                 chunk_tokenizer::k_default_max_entries, static_cast<double>(tok_.max_bytes()) / (1 << 20),
                 tok_.hits(), tok_.misses());
  const completion_metrics& m = res.metrics;
  spdlog::debug(
      "completion {} v{} {}:{}: {} item(s){} total {:.1f} ms, ttft {:.1f}, tpot {:.1f}, reused {}, evaluated {}, "
      "generated {}, drafted {}/{} accepted{}",
      req.uri, req.version, req.cursor.line, req.cursor.byte_col, res.items.size(), res.incomplete ? " (incomplete)" : "",
      m.total_ms, m.ttft_ms, m.tpot_ms, m.tokens_reused, m.tokens_evaluated, m.tokens_generated, m.tokens_accepted,
      m.tokens_drafted, m.type_through ? ", type-through" : "");
  return res;
}

std::string pipeline::run(const completion_request& req, const cancel_token& cancel, completion_result& res,
                          bool prefetch) {
  const auto t0 = clock::now();
  // Post-processing, job 1: the trigger, before any engine work.
  const cursor_context cx = make_cursor_context(req.text, req.cursor.line, req.cursor.byte_col);
  const trigger_decision dec = decide_trigger(cx, req.explicit_trigger, s_);
  if (dec.skip) return {};
  const size_t cursor_off = offset_of(req.text, req.cursor.line, req.cursor.byte_col);
  const std::string& key = req.cache_key();

  if (auto pf = prefetched_.find(key); pf != prefetched_.end() && !prefetch) {
    if (pf->second.text.view() == req.text.view() && pf->second.cursor == cursor_off) {
      res.items.push_back(make_candidate(pf->second.suggestion, cx));
      res.metrics.cache_hit = true;
      if (s_.type_through) tt_.remember(key, req.text, cursor_off, pf->second.suggestion);
      prefetched_.erase(pf);
      return {};
    }
    prefetched_.erase(pf);
  }
  if (s_.type_through && !prefetch) {
    if (std::optional<std::string> rest = tt_.lookup(key, req.text, cursor_off, &res.metrics.kept)) {
      res.items.push_back(make_candidate(*rest, cx));
      res.metrics.type_through = true;
      return {};
    }
  }

  doc_state& ds = docs_[key];
  take_request(ds, req, cx.line, cx.col);
  std::vector<extra_doc> extra;
  layout_input in = input_of(ds, extra);
  if (ds.pending_ready) {
    // The state of the layout left behind -- the replaced one, or the
    // pending one when no longer valid -- is wanted no more: its slot is free.
    if (builder_.still_valid(in, ds.pending)) {
      ds.lay = ds.pending;
      pool_->release(ds.live_slot, key);
    } else {
      pool_->release(ds.pending_slot, key);
    }
    ds.pending = layout{};
    ds.pending_ready = false;
  }
  prompt p = builder_.build(in, ds.lay, /*force_relayout=*/false, &ds.parked);
  if ((p.relayout || p.restored) && ds.pending.valid) {
    // A rebase still being warmed was for the layout just left (a jump): its state is wanted no more.
    pool_->release(ds.pending_slot, key);
    ds.pending = layout{};
  }
  ds.row = p.cursor_row;
  int max_tokens = max_tokens_of(req);
  if (static_cast<int64_t>(p.tokens.size()) + max_tokens + s_.draft_max + 2 > pool_->n_ctx()) {
    spdlog::warn("completion: prompt of {} tokens does not fit a context of {}; lower the token budgets",
                 p.tokens.size(), pool_->n_ctx());
    res.incomplete = true;
    return {};
  }
  slot_choice sc = pool_->acquire(key, p.tokens);
  ds.live_slot = sc.slot;
  res.metrics.tokens_reused = sc.reused;
  res.metrics.cache_hit = sc.reused > 0;

  gen_params gp;
  gp.start = req.received.time_since_epoch().count() ? req.received : t0;
  const bool has_deadline = req.deadline.time_since_epoch().count() != 0;
  // Decoding ends early enough for the post-processing to fit before the
  // deadline too (its syntax pass has a CPU budget of its own).
  gp.deadline = has_deadline ? req.deadline - (s_.stop_rules ? k_syntax_budget : clock::duration{0})
                             : gen_clock::time_point::max();
  if (has_deadline) {
    auto budget = req.deadline - t0;
    gp.prompt_deadline = t0 + std::chrono::duration_cast<clock::duration>(budget * s_.prompt_share);
  }
  gp.finish_line = std::chrono::milliseconds(s_.finish_line_ms);
  gp.max_tokens = max_tokens;
  gp.stop_rules = s_.stop_rules;
  gp.speculative = s_.speculative;
  gp.draft_max = s_.draft_max;
  gp.draft_ngram = s_.draft_ngram;
  gp.draft = draft_.get();
  if (!prefetch) gp.progress = req.progress.get();
  gp.prompt_chunk = prefetch ? s_.background_chunk_tokens : s_.prompt_chunk_tokens;
  gp.prefill_tokens_per_s = prefill_tps_;
  gp.step_estimate = std::chrono::duration_cast<gen_clock::duration>(std::chrono::duration<double, std::milli>(step_ms_));
  // Job 2: the stop rules, applied by the generator while it decodes (a copy per candidate).
  stop_checker stops(cx, dec, s_.stop_rules);
  const sampling_settings& cls = req.explicit_trigger ? s_.sampling_explicit : s_.sampling_auto;
  int n_candidates = prefetch ? 1 : cls.candidates;
  if (has_deadline && !prefetch) {
    // Under load: fewer candidates and tokens when the estimate breaks the deadline.
    const int64_t rows = static_cast<int64_t>(p.tokens.size()) - sc.reused;
    const load_decision d = decide_load(rows, max_tokens, n_candidates, ms_between(clock::now(), gp.deadline));
    degradation& dg = res.metrics.degraded;
    dg.estimate_ms = d.estimate_ms;
    dg.left_ms = d.left_ms;
    dg.max_tokens = d.max_tokens;
    dg.candidates = d.candidates;
    dg.shortened = d.shortened;
    dg.candidates_dropped = d.candidates_dropped;
    if (d.shortened || d.candidates_dropped) spdlog::debug("completion {}: under load, {}", req.uri, d.reason);
    gp.max_tokens = max_tokens = d.max_tokens;
    n_candidates = d.candidates;
  }
  if (n_candidates > 1 && !forks_) forks_ = std::make_unique<candidate_forks>(*backend_, pool_->n_ctx());
  std::vector<gen_outcome> outs = generate_candidates(*sc.seq, backend_->vocab(), fmt_, p.tokens, stops, gp,
                                                      sampler_params_of(cls, s_.seed), n_candidates, cancel,
                                                      forks_.get());
  const gen_outcome& out = outs.front();
  note_prefill(out);

  completion_metrics& m = res.metrics;
  m.tokens_evaluated = out.evaluated;
  for (const gen_outcome& o : outs) {
    m.tokens_generated += static_cast<int64_t>(o.generated.size());
    m.tokens_drafted += o.drafted;
    m.tokens_accepted += o.accepted;
  }
  m.ttft_ms = out.ttft_ms;
  m.tpot_ms = out.tpot_ms;
  const bool cancelled = std::any_of(outs.begin(), outs.end(),
                                     [](const gen_outcome& o) { return o.cancelled != cancel_reason::none; });
  if (cancelled) {
    if (prefetch) return {};
    // Stale: the server discards the answer. Finish the prompt later if it was cut.
    if (!out.prompt_done) queue(task{task_kind::warm, key, p.tokens});
    return {};
  }
  if (!out.prompt_done) {
    res.incomplete = true;
    if (prefetch) return {};
    queue(task{task_kind::warm, key, p.tokens});
    return {};
  }
  drop_tasks(key, task_kind::warm);
  if (!prefetch && draft_ && s_.speculative && draft_->behind(p.tokens)) queue(task{task_kind::draft_warm, key, p.tokens});
  const syntax_window window =
      make_syntax_window(req.text, cursor_off, index::find_syntax_language(req.language_id, req.uri));
  // Job 3: the cleanup, once per candidate, best score first; then empty
  // ones, duplicates and those under the gate are dropped.
  std::vector<const gen_outcome*> order;
  for (const gen_outcome& o : outs) order.push_back(&o);
  std::stable_sort(order.begin(), order.end(),
                   [](const gen_outcome* a, const gen_outcome* b) { return a->score() > b->score(); });
  m.candidates = static_cast<int64_t>(outs.size());
  std::vector<std::string> seen, texts;  // every distinct text; those shown
  const double gate_threshold = gate(req.explicit_trigger).threshold;
  for (const gen_outcome* o : order) {
    std::string text = finalize(o->text, cx, dec, s_.stop_rules, &window);
    if (text.empty()) continue;
    if (std::find(seen.begin(), seen.end(), text) != seen.end()) {
      ++m.duplicates;
      continue;
    }
    seen.push_back(text);
    if (!m.score) m.score = o->score();
    if (o->score() < gate_threshold) {
      ++m.gated;
      continue;
    }
    texts.push_back(text);
    if (prefetch) continue;
    res.items.push_back(make_candidate(text, cx));
    res.items.back().score = o->score();
  }
  res.incomplete = outs.back().deadline_hit;
  const std::string text = texts.empty() ? std::string() : texts.front();
  if (prefetch) return text;
  ds.suggestion = text;
  if (s_.type_through) tt_.remember(key, req.text, cursor_off, text, req.progress && req.progress->detached());
  // A quick layout (a jump's first, prompt_layout.h) is followed by the full one at the cursor.
  if (s_.rebase_when_idle && fmt_.has_fim && (ds.lay.anchor_line < ds.row || ds.lay.quick))
    queue(task{task_kind::rebase, key, {}});
  if (s_.prefetch && !text.empty()) queue(task{task_kind::prefetch, key, {}});
  return text;
}

void pipeline::take_request(doc_state& ds, const completion_request& req, int64_t line, int64_t col) {
  ds.uri = req.uri;
  ds.text = req.text;
  ds.line = line;
  ds.col = col;
  ds.explicit_trigger = req.explicit_trigger;
  ds.extra.clear();
  for (const auto& d : req.context_docs) ds.extra.emplace_back(d.uri, d.text);
  ds.language_id = req.language_id;
  ds.syntax = req.syntax;
  ds.definitions = req.definitions;
  ds.edits = req.edits;
  ds.recent = req.recent;
}

layout_input pipeline::input_of(const doc_state& ds, std::vector<extra_doc>& extra) const {
  extra.clear();
  for (const auto& [u, t] : ds.extra) extra.push_back(extra_doc{u, t});
  layout_input in;
  in.text = ds.text;
  in.cursor_line = ds.line;
  in.cursor_col = ds.col;
  in.uri = ds.uri;
  in.extra = extra;
  in.ctx.language_id = ds.language_id;
  in.ctx.tree = ds.syntax.get();
  in.ctx.definitions = ds.definitions.get();
  in.ctx.edits = ds.edits.get();
  in.ctx.recent = ds.recent.get();
  return in;
}

bool pipeline::run_rebase(doc_state& ds, const std::string& key, const cancel_token& cancel) {
  if (ds.row <= ds.lay.anchor_line && !ds.lay.quick) return true;  // nothing to move
  std::vector<extra_doc> extra;
  layout_input in = input_of(ds, extra);
  layout next = ds.lay;  // keeps the prefix window's first line when it still fits
  prompt p = builder_.build(in, next, /*force_relayout=*/true);
  if (static_cast<int64_t>(p.tokens.size()) + s_.max_tokens_explicit + s_.draft_max + 2 > pool_->n_ctx()) return true;
  if (pool_->max_slots() == 1) {
    // One slot: warming destroys the live layout's cache anyway, so switch now.
    ds.lay = next;
  } else {
    ds.pending = next;
    ds.pending_ready = false;
  }
  slot_choice sc = pool_->acquire(key, p.tokens, pool_->max_slots() > 1 ? ds.live_slot : -1);
  ds.pending_slot = sc.slot;
  gen_params gp;
  gp.prompt_chunk = s_.background_chunk_tokens;
  gen_outcome out;
  const bool done = eval_prompt(*sc.seq, p.tokens, gp, cancel, out);
  note_prefill(out);
  if (!done) return false;
  if (pool_->max_slots() > 1) ds.pending_ready = true;
  return true;
}

bool pipeline::run_prefetch(doc_state& ds, const std::string& key, const cancel_token& cancel) {
  if (ds.suggestion.empty()) return true;
  // The document as if the last suggestion were accepted, with the cursor after it.
  const std::string_view text = ds.text;
  const size_t off = offset_of(text, ds.line, ds.col);
  completion_request req;
  req.uri = ds.uri;
  if (key != ds.uri) req.buffer_key = key;
  req.text = std::string(text.substr(0, off)) + ds.suggestion + std::string(text.substr(off));
  const size_t cursor = off + ds.suggestion.size();
  auto [line, col] = line_col_of(req.text, cursor);
  req.cursor = text_pos{line, col};
  req.explicit_trigger = ds.explicit_trigger;
  for (const auto& [u, t] : ds.extra) req.context_docs.push_back({u, t});
  req.language_id = ds.language_id;
  req.definitions = ds.definitions;
  req.edits = ds.edits;
  req.recent = ds.recent;  // no tree: it belongs to the text without the suggestion
  completion_result res;
  std::string suggestion = run(req, cancel, res, /*prefetch=*/true);
  if (cancel.is_cancelled()) return false;
  if (!suggestion.empty()) prefetched_[key] = prefetched{req.text, cursor, std::move(suggestion)};
  return true;
}

int pipeline::max_tokens_of(const completion_request& req) const {
  if (req.max_tokens > 0) return std::min(req.max_tokens, s_.max_tokens_explicit);  // the client's own (HTTP n_predict)
  return req.explicit_trigger ? s_.max_tokens_explicit : s_.max_tokens_auto;
}

load_decision pipeline::decide_load(int64_t prompt_rows, int max_tokens, int candidates, double left_ms) const {
  load_request r;
  r.prompt_rows = std::max<int64_t>(0, prompt_rows);
  r.max_tokens = max_tokens;
  r.candidates = candidates;
  r.left_ms = left_ms;
  load_rates own;
  own.prefill_ms_per_row = prefill_tps_ > 0 ? 1000.0 / prefill_tps_ : 0;
  // Per generated token: a step, or less where speculation gave several tokens a step.
  own.step_ms = tpot_ms_ > 0 && (step_ms_ <= 0 || tpot_ms_ < step_ms_) ? tpot_ms_ : step_ms_;
  return plan_load(r, own, backend_->load(), load_policy{s_.degrade, s_.degrade_min_tokens, double(s_.degrade_margin_ms)});
}

bool pipeline::background_step(const cancel_token& cancel) {
  // Under load: background work and prefetch wait while other sequences'
  // (foreground) work runs on the shared engine; the queue is kept and the
  // next idle turn after a request tries again.
  if (s_.degrade && !tasks_.empty() && foreground_busy(backend_->load())) {
    ++background_paused_;
    return false;
  }
  while (!tasks_.empty()) {
    if (cancel.is_cancelled()) return true;
    task t = tasks_.front();
    auto it = docs_.find(t.key);
    if (it == docs_.end()) {
      tasks_.pop_front();
      continue;
    }
    bool finished = true;
    switch (t.kind) {
      case task_kind::warm: {
        slot_choice sc = pool_->acquire(t.key, t.tokens);
        gen_params gp;
        gp.prompt_chunk = s_.background_chunk_tokens;
        gen_outcome out;
        finished = eval_prompt(*sc.seq, t.tokens, gp, cancel, out);
        note_prefill(out);
        break;
      }
      case task_kind::draft_warm:
        if (draft_) finished = draft_->warm(t.tokens, s_.background_chunk_tokens, cancel);
        break;
      case task_kind::rebase:
        finished = run_rebase(it->second, t.key, cancel);
        break;
      case task_kind::prefetch:
        finished = run_prefetch(it->second, t.key, cancel);
        break;
    }
    if (!finished) return true;  // preempted: resume later
    if (!tasks_.empty() && tasks_.front().key == t.key && tasks_.front().kind == t.kind) tasks_.pop_front();
    return !tasks_.empty();
  }
  return false;
}

}  // namespace qf::server::completion
