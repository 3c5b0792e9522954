// Prompt phase and greedy/speculative decoding under a budget (see the header).
#include "server/completion/decode/generator.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <tuple>

#include "server/completion/decode/prompt_lookup.h"
#include "server/completion/decode/verify_step.h"
#include "text/utf8.h"

namespace qf::server::completion {
namespace {

double ms_between(gen_clock::time_point a, gen_clock::time_point b) {
  return std::chrono::duration<double, std::milli>(b - a).count();
}

// Records why `tok` stopped the work: a request cancellation (a source's
// reason, which wins over the deadline) or the deadline.
void note_stop(const cancel_token& tok, gen_outcome& out) {
  const cancel_reason why = tok.reason();
  if (why != cancel_reason::none && why != cancel_reason::deadline) out.cancelled = why;
  else out.deadline_hit = true;
}

}  // namespace

std::string utf8_stream::push(std::string_view bytes) {
  pending_.append(bytes);
  const size_t cut = text::without_partial_tail(pending_).size();
  std::string out = text::repair_utf8(std::string_view(pending_).substr(0, cut));
  pending_.erase(0, cut);
  return out;
}

std::string utf8_stream::flush() {
  // An unfinished character at the end was never completed by the model: drop it.
  pending_.clear();
  return {};
}

bool eval_prompt(lm_sequence& seq, std::span<const int32_t> prompt, const gen_params& p, const cancel_token& cancel,
                 gen_outcome& out) {
  int64_t cached = static_cast<int64_t>(seq.tokens().size());
  const int64_t total = static_cast<int64_t>(prompt.size());
  // The last prompt eval also yields the first token, so a short rest of the
  // prompt (the usual keystroke) may use the whole budget, not just its share.
  const gen_clock::time_point prompt_deadline =
      total - cached <= p.short_prompt_tokens ? std::max(p.prompt_deadline, p.deadline) : p.prompt_deadline;
  const cancel_token tok = cancel.with_deadline(prompt_deadline);
  while (cached < total) {
    if (tok.is_cancelled()) {
      note_stop(tok, out);
      return false;
    }
    int64_t n = std::min(p.prompt_chunk, total - cached);
    if (prompt_deadline != gen_clock::time_point::max()) {
      if (p.prefill_tokens_per_s <= 0) {
        n = std::min<int64_t>(n, 8);  // unknown speed: a small first chunk measures it
      } else {
        const double left_s = std::chrono::duration<double>(prompt_deadline - gen_clock::now()).count();
        const auto fits = static_cast<int64_t>(p.prefill_tokens_per_s * left_s * 0.8);
        if (fits < 1) {
          out.deadline_hit = true;  // not even one more token would finish in time
          return false;
        }
        n = std::min(n, fits);
      }
    }
    const bool last = cached + n == total;
    const auto t0 = gen_clock::now();
    lm_eval_result r = seq.eval(prompt.subspan(cached, n), last ? lm_logits::last : lm_logits::none, tok,
                                last && p.full_first_row ? lm_output::full : lm_output::best);
    if (!r.cancelled) out.prompt_eval_ms += ms_between(t0, gen_clock::now());
    out.evaluated += r.n_evaluated;
    cached = static_cast<int64_t>(seq.tokens().size());
    if (r.cancelled) {
      note_stop(tok, out);
      return false;
    }
  }
  return true;
}

first_row take_first_row(const lm_sequence& seq) {
  first_row f;
  f.best = seq.best_token(0);
  f.best_logprob = seq.best_logprob(0);
  const std::span<const float> l = seq.logits(0);
  f.logits.assign(l.begin(), l.end());
  return f;
}

void decode(lm_sequence& seq, const lm_vocab& vocab, const fim_format& fmt, std::span<const int32_t> prompt,
            const first_row& first, stop_checker& stops, const gen_params& p, infer::sampler* smp,
            const cancel_token& cancel, gen_outcome& out) {
  // The answer is due by p.deadline: the engine's token stops a step there.
  // With line rules the last p.finish_line of the budget only ends the
  // current line (soft: checked between steps, where the line can end).
  const bool timed = p.deadline != gen_clock::time_point::max();
  const auto soft_deadline = timed && p.stop_rules ? p.deadline - p.finish_line : p.deadline;
  const cancel_token tok = cancel.with_deadline(p.deadline);
  std::vector<int32_t> history(prompt.begin(), prompt.end());
  utf8_stream utf8;
  gen_clock::time_point t_first{}, t_last{};
  gen_clock::duration step_time = p.step_estimate;  // duration of the last decode step (the estimate before one)
  const size_t generated0 = out.generated.size();

  auto is_stop = [&](int32_t t) {
    return vocab.is_control(t) || std::find(fmt.stop_ids.begin(), fmt.stop_ids.end(), t) != fmt.stop_ids.end();
  };
  // Takes one decoded token and its log-probability; returns true when decoding must end.
  auto consume = [&](int32_t t, float logprob) -> bool {
    auto now = gen_clock::now();
    if (out.generated.size() == generated0) {
      t_first = now;
      out.ttft_ms = ms_between(p.start, now);
    }
    t_last = now;
    out.generated.push_back(t);
    if (std::isfinite(logprob)) out.logprob_sum += logprob;
    history.push_back(t);
    if (is_stop(t)) {
      if (p.stop_rules) return true;
    } else if (stops.push(utf8.push(vocab.piece(t)))) {
      return true;
    }
    if (p.progress) p.progress->publish(stops.kept());
    if (static_cast<int>(out.generated.size() - generated0) >= p.max_tokens) return true;
    // Stop when the next step would end past the deadline (the answer is due
    // by then); in the finish-line window, also at the end of a line.
    if (timed && now + step_time >= soft_deadline) {
      out.deadline_hit = true;
      if (!p.stop_rules || stops.at_line_end() || now + step_time >= p.deadline) return true;
    }
    return false;
  };
  // The next token from a row: the sampler's draw, or the best token.
  auto pick = [&](std::span<const float> row, int32_t best, float best_lp) -> std::pair<int32_t, float> {
    if (!smp || row.empty()) return {best, best_lp};
    const int32_t id = smp->sample(row, history);
    return {id, infer::token_logprob(row, id)};
  };

  auto [next, next_lp] = pick(first.logits, first.best, first.best_logprob);
  if (next < 0) return;
  const lm_output want = smp ? lm_output::full : lm_output::best;
  while (!consume(next, next_lp)) {
    if (tok.is_cancelled()) {
      note_stop(tok, out);
      break;
    }
    const auto step_start = gen_clock::now();  // a step's time includes its drafting
    std::vector<int32_t> draft;
    if (p.speculative && !smp) {
      const int n = std::min(p.draft_max, p.max_tokens - static_cast<int>(out.generated.size() - generated0));
      draft = p.draft ? p.draft->propose(history, n, tok) : prompt_lookup_draft(history, p.draft_ngram, n);
    }
    const step_result r = verify_step(seq, next, draft, tok, want, consume);
    if (r.context_full) break;
    step_time = gen_clock::now() - step_start;
    if (draft.empty()) out.step_ms = std::chrono::duration<double, std::milli>(step_time).count();
    if (r.cancelled) {
      note_stop(tok, out);
      break;
    }
    out.drafted += r.drafted;
    out.accepted += r.accepted;
    if (r.done) break;
    std::tie(next, next_lp) = draft.empty() ? pick(seq.logits(0), r.next, r.next_logprob)
                                            : std::pair<int32_t, float>{r.next, r.next_logprob};
  }
  (void)stops.push(utf8.flush());
  const size_t n_gen = out.generated.size() - generated0;
  if (n_gen > 1) out.tpot_ms = ms_between(t_first, t_last) / double(n_gen - 1);
  out.text = stops.final_text(out.deadline_hit);
}

gen_outcome generate(lm_sequence& seq, const lm_vocab& vocab, const fim_format& fmt, std::span<const int32_t> prompt,
                     stop_checker& stops, const gen_params& p, const cancel_token& cancel) {
  gen_outcome out;
  if (prompt.empty() || !eval_prompt(seq, prompt, p, cancel, out)) return out;
  out.prompt_done = true;
  decode(seq, vocab, fmt, prompt, take_first_row(seq), stops, p, nullptr, cancel, out);
  return out;
}

}  // namespace qf::server::completion
