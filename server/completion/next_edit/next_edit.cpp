// Next-edit prediction (see the header).
#include "server/completion/next_edit/next_edit.h"

#include <spdlog/spdlog.h>

#include <algorithm>

#include "text/lines.h"
#include "server/completion/decode/generator.h"
#include "server/completion/next_edit/next_edit_diff.h"
#include "server/completion/next_edit/next_edit_region.h"
#include "server/completion/decode/prompt_lookup.h"
#include "server/completion/decode/verify_step.h"

namespace qf::server::completion {
namespace {

using steady = std::chrono::steady_clock;

double ms_since(steady::time_point t) { return std::chrono::duration<double, std::milli>(steady::now() - t).count(); }

// The rewrite with the document's line ending: a model writes "\n", a CRLF
// document's region has "\r\n", and only the text may differ, not the breaks.
std::string with_line_ending(std::string s, std::string_view ending) {
  if (ending != "\r\n") return s;
  std::string out;
  out.reserve(s.size() + s.size() / 16);
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\n' && (i == 0 || s[i - 1] != '\r')) out.push_back('\r');
    out.push_back(s[i]);
  }
  return out;
}

// Related files for the sweep layout: the head of a few other open documents,
// the most recently used last (nearest to the current file).
std::vector<related_file> related_files(const next_edit_request& req, int max_files, int max_lines) {
  std::vector<related_file> out;
  for (const auto& d : req.context_docs) {
    if (static_cast<int>(out.size()) >= max_files) break;
    const std::string_view t = d.text;
    const size_t end = text::line_start_offset(t, max_lines);
    std::string head(t.substr(0, end));
    if (!head.empty() && head.back() == '\n') head.pop_back();
    out.push_back(related_file{prompt_path_of(d.uri), std::move(head)});
  }
  std::reverse(out.begin(), out.end());
  return out;
}

}  // namespace

next_edit_engine::next_edit_engine(lm_backend& backend, kv_pool& pool, const completion_settings& settings)
    : backend_(backend), pool_(pool), s_(settings) {}

std::vector<int32_t> next_edit_engine::tokenize(const next_edit_prompt& p) const {
  const lm_vocab& v = backend_.vocab();
  std::vector<int32_t> out;
  if (v.add_bos() && v.specials().bos >= 0) out.push_back(v.specials().bos);
  for (const prompt_piece& piece : p.pieces) {
    const int32_t id = piece.special ? v.find_token(piece.text) : -1;
    if (id >= 0) {
      out.push_back(id);
      continue;
    }
    const std::vector<int32_t> t = v.encode(piece.text);
    out.insert(out.end(), t.begin(), t.end());
  }
  return out;
}

next_edit_engine::decoded next_edit_engine::decode(const std::string& owner, const std::vector<int32_t>& prompt,
                                                   const next_edit_prompt& p, int max_tokens,
                                                   steady::time_point deadline, const cancel_token& cancel,
                                                   next_edit_metrics& m) {
  decoded d;
  const lm_vocab& v = backend_.vocab();
  slot_choice sc = pool_.acquire(owner, prompt);
  m.tokens_reused += sc.reused;
  gen_params gp;
  gp.prompt_chunk = s_.prompt_chunk_tokens;
  gp.prompt_deadline = deadline;
  gp.deadline = deadline;
  gen_outcome go;
  const bool done = eval_prompt(*sc.seq, prompt, gp, cancel, go);
  m.tokens_evaluated += go.evaluated;
  if (!done) {
    d.cancelled = cancel.is_cancelled();
    d.out_of_time = !d.cancelled;
    return d;
  }
  std::vector<int32_t> stop_ids{v.specials().eos, v.specials().eot};
  for (const std::string& st : p.stop_tokens) stop_ids.push_back(v.find_token(st));
  auto is_stop = [&](int32_t t) { return t >= 0 && std::find(stop_ids.begin(), stop_ids.end(), t) != stop_ids.end(); };

  const cancel_token tok = cancel.with_deadline(deadline);
  lm_sequence& seq = *sc.seq;
  std::vector<int32_t> history(prompt.begin(), prompt.end());
  utf8_stream utf8;
  int generated = 0;
  // Takes one token; true when decoding ends.
  auto consume = [&](int32_t t) -> bool {
    ++generated;
    ++m.tokens_generated;
    history.push_back(t);
    if (is_stop(t)) {
      d.stopped = true;
      return true;
    }
    if (v.is_control(t)) return true;  // another control token: the output is not a region
    d.text += utf8.push(v.piece(t));
    if (!p.end_text.empty() && d.text.find(p.end_text) != std::string::npos) {
      d.stopped = true;
      return true;
    }
    return generated >= max_tokens;
  };
  int32_t next = seq.best_token(0);
  while (!consume(next) && !tok.is_cancelled()) {
    std::vector<int32_t> draft;
    if (s_.speculative)
      draft = prompt_lookup_draft(history, s_.draft_ngram, std::min(2 * s_.draft_max, max_tokens - generated));
    const step_result r =
        verify_step(seq, next, draft, tok, lm_output::best, [&](int32_t t, float) { return consume(t); });
    if (r.context_full || r.cancelled) break;
    m.tokens_drafted += r.drafted;
    m.tokens_accepted += r.accepted;
    if (r.done) break;
    next = r.next;
  }
  if (!d.stopped && tok.is_cancelled()) {
    d.cancelled = cancel.is_cancelled();
    d.out_of_time = !d.cancelled;
  }
  return d;
}

next_edit_result next_edit_engine::run(const next_edit_request& req, const cancel_token& cancel) {
  const auto t0 = steady::now();
  next_edit_result res;
  const std::optional<next_edit_family> fam = pick_next_edit_format(s_.next_edit_format, model_name_);
  if (!fam) {
    res.reason = s_.next_edit_format == "off"
                     ? "next-edit prediction is off (nextEdit.format)"
                     : "the model (" + model_name_ +
                           ") is not a known next-edit model; set nextEdit.format to zeta or sweep to use it anyway";
    return res;
  }
  res.format = std::string(family_name(*fam));
  const std::string_view text = req.text;
  const size_t cursor = text::offset_of_line_col(text, req.cursor.line, req.cursor.byte_col);

  // Recent edits: newest first within the byte budget, then oldest first.
  std::vector<index::edit_hunk> recent = req.edits ? req.edits->recent({}, 32) : std::vector<index::edit_hunk>{};
  std::optional<index::edit_hunk> latest;
  for (const index::edit_hunk& h : recent)
    if (h.uri == req.uri) {
      latest = h;
      break;
    }
  std::vector<index::edit_hunk> hunks;
  size_t bytes = 0;
  for (index::edit_hunk& h : recent) {
    if (bytes + h.bytes() > static_cast<size_t>(s_.next_edit_history_bytes)) break;
    bytes += h.bytes();
    hunks.push_back(std::move(h));
  }
  std::reverse(hunks.begin(), hunks.end());

  struct place {
    text_region region;
    size_t cursor;
  };
  std::vector<place> places;
  const int lines = s_.next_edit_region_lines, ctx = s_.next_edit_context_lines;
  const text_region first = region_around(text, req.cursor.line, lines, ctx);
  places.push_back({first, std::clamp(cursor, first.begin, first.end)});
  if (latest) {
    if (std::optional<second_place> sp = find_second_place(text, first, *latest, req.cursor.line)) {
      text_region r = region_around(text, sp->line, lines, ctx);
      if (r.first_line <= first.last_line && r.last_line >= first.first_line)  // overlap: keep to its own side
        r = sp->line > first.last_line ? region_of_lines(text, first.last_line + 1, r.last_line, ctx)
                                       : region_of_lines(text, r.first_line, first.first_line - 1, ctx);
      places.push_back({r, sp->offset});
    }
  }
  const std::vector<related_file> related =
      *fam != next_edit_family::zeta ? related_files(req, 3, 30) : std::vector<related_file>{};
  const bool has_deadline = req.deadline.time_since_epoch().count() != 0;
  const steady::time_point deadline = has_deadline ? req.deadline : steady::time_point::max();

  for (size_t i = 0; i < places.size(); ++i) {
    if (i > 0 && steady::now() >= deadline) break;
    const place& pl = places[i];
    next_edit_prompt_input in;
    in.path = prompt_path_of(req.uri);
    in.text = text;
    in.cursor = pl.cursor;
    in.region_begin = pl.region.begin;
    in.region_end = pl.region.end;
    in.context_begin = pl.region.context_begin;
    in.context_end = pl.region.context_end;
    in.original_region = region_before_edit(text, pl.region, latest ? &*latest : nullptr);
    in.hunks = hunks;
    in.related = related;
    const next_edit_prompt p = build_next_edit_prompt(*fam, in);
    const std::vector<int32_t> toks = tokenize(p);
    const std::string_view region = text.substr(pl.region.begin, pl.region.end - pl.region.begin);
    const int region_tokens = static_cast<int>(backend_.vocab().encode(region).size());
    const int max_tokens = std::min(s_.next_edit_max_tokens, 2 * region_tokens + 32);
    if (static_cast<int64_t>(toks.size()) + max_tokens + 2 * s_.draft_max + 2 > pool_.n_ctx()) {
      res.reason = "the next-edit prompt (" + std::to_string(toks.size()) + " tokens) does not fit a context of " +
                   std::to_string(pool_.n_ctx());
      continue;
    }
    const decoded d = decode(next_edit_engine::slot_owner(req.cache_key()), toks, p, max_tokens, deadline, cancel, res.metrics);
    if (d.cancelled) return res;  // stale: the server discards it
    const std::optional<std::string> rewrite = parse_next_edit_output(*fam, d.text, d.stopped);
    if (!rewrite) {
      res.incomplete = true;
      continue;
    }
    ++res.metrics.regions;
    for (const region_edit& e : diff_region(region, with_line_ending(*rewrite, text::first_line_ending(text)))) {
      const text::line_col b = text::line_col_of_offset(text, pl.region.begin + e.begin);
      const text::line_col en = text::line_col_of_offset(text, pl.region.begin + e.end);
      next_edit_edit out{{b.line, b.col}, {en.line, en.col}, e.new_text, false};
      out.at_cursor = b.line <= req.cursor.line && req.cursor.line <= en.line;
      res.edits.push_back(std::move(out));
    }
  }
  std::sort(res.edits.begin(), res.edits.end(), [](const next_edit_edit& a, const next_edit_edit& b) {
    return a.begin.line != b.begin.line ? a.begin.line < b.begin.line : a.begin.byte_col < b.begin.byte_col;
  });
  if (res.edits.empty() && res.reason.empty())
    res.reason = res.incomplete ? "the rewrite did not finish within the budget" : "the model predicts no change";
  res.metrics.total_ms = ms_since(req.received.time_since_epoch().count() ? req.received : t0);
  spdlog::debug("next edit {} v{} {}:{}: {} edit(s) in {} region(s), {:.1f} ms, reused {}, evaluated {}, generated {}, "
                "drafted {}/{} accepted ({})",
                req.uri, req.version, req.cursor.line, req.cursor.byte_col, res.edits.size(), res.metrics.regions,
                res.metrics.total_ms, res.metrics.tokens_reused, res.metrics.tokens_evaluated,
                res.metrics.tokens_generated, res.metrics.tokens_accepted, res.metrics.tokens_drafted, res.reason);
  return res;
}

}  // namespace qf::server::completion
