// Budgeted prompt processing and decoding on one KV sequence.
//
// Phase 1 evaluates the prompt tokens that are not cached yet, in chunks so
// that each finished chunk stays in the cache even if the phase is cut short;
// it stops at the prompt deadline or on cancellation. Phase 2 decodes
// greedily (one token or one verified speculative draft per step) or by
// sampling (one token per step, from the whole logits row), until a stop
// rule, the token limit, the deadline or cancellation. The deadline is hard:
// a step is begun only when it would end in time (by the last step's
// duration, or the measured step_estimate before the first), and the engine
// stops a step at it; with line rules the last finish_line of the budget
// begins no new line. Special/control
// tokens are never turned into text. Every decoded token's log-probability
// under the model is summed: the outcome's score is their mean.
//
// The engine sees both the request's cancellation and the phase's deadline
// through one token: the caller's, with the deadline added
// (cancel_token::with_deadline). It polls that token between layers and
// between matmul row blocks, so a deadline stops it there with no thread
// watching the clock; the token's reason tells a cancel from the deadline.
#pragma once

#include <chrono>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "inference/core/cancellation.h"
#include "inference/sampling/sampler.h"
#include "server/completion/decode/drafter.h"
#include "server/completion/prompt/fim_format.h"
#include "server/completion/api/inflight.h"
#include "server/completion/api/lm.h"
#include "server/completion/postprocess/stop_rules.h"

namespace qf::server::completion {

using gen_clock = std::chrono::steady_clock;

struct gen_params {
  int max_tokens = 32;
  gen_clock::time_point start{};            // for ttft
  gen_clock::time_point prompt_deadline = gen_clock::time_point::max();
  gen_clock::time_point deadline = gen_clock::time_point::max();
  // With line rules, the last finish_line of the budget only finishes the
  // current line (no new line is begun); the answer is still due by deadline.
  std::chrono::milliseconds finish_line{0};
  // Measured time of one decode step (0 = unknown): a step is begun only
  // when it would end before the deadline.
  gen_clock::duration step_estimate{0};
  bool stop_rules = true;
  bool speculative = false;
  int draft_max = 8;
  int draft_ngram = 3;
  // Where drafts come from when speculative (null: prompt lookup with draft_ngram).
  drafter* draft = nullptr;
  int64_t prompt_chunk = 128;  // tokens per prompt eval call
  int64_t short_prompt_tokens = 16;  // a rest of the prompt this short may use the whole deadline
  // Measured prompt throughput (0 = unknown). With a prompt deadline, a chunk
  // is sized to finish before it, so that the work is committed, not discarded.
  double prefill_tokens_per_s = 0;
  // The last prompt eval returns the whole logits row (a sampler draws the
  // first token from it); otherwise only the best token and its log-probability.
  bool full_first_row = false;
  // Where decoding publishes the text kept so far after each token (null:
  // nowhere), for in-flight reuse (inflight.h).
  generation_progress* progress = nullptr;
};

struct gen_outcome {
  bool prompt_done = false;
  bool deadline_hit = false;
  cancel_reason cancelled = cancel_reason::none;  // request cancellation (not the deadline)
  std::string text;                   // kept text (stop rules applied while streaming)
  std::vector<int32_t> generated;     // tokens decoded (including any cut by a stop rule)
  int64_t evaluated = 0;              // prompt tokens evaluated now
  double prompt_eval_ms = 0;          // time spent in completed prompt eval calls
  int64_t drafted = 0, accepted = 0;
  double ttft_ms = 0, tpot_ms = 0;
  double step_ms = 0;                 // duration of the last single-token decode step (0: none ran)
  double logprob_sum = 0;             // over `generated`
  // Mean log-probability of the decoded tokens (<= 0); 0 when none was decoded.
  double score() const { return generated.empty() ? 0.0 : logprob_sum / double(generated.size()); }
};

// What the last prompt eval left: the first token's distribution, kept so
// that several sequences can start from one evaluated prompt.
struct first_row {
  int32_t best = -1;
  float best_logprob = 0;
  std::vector<float> logits;  // whole row when gen_params::full_first_row
};
first_row take_first_row(const lm_sequence& seq);

// Evaluates the not-yet-cached part of `prompt` (the cache must hold a prefix
// of it). Returns false when stopped early (see out.cancelled / deadline_hit).
bool eval_prompt(lm_sequence& seq, std::span<const int32_t> prompt, const gen_params& p, const cancel_token& cancel,
                 gen_outcome& out);

// Phase 2 on a sequence that holds exactly `prompt`, starting from `first`
// (its last row). `smp` null: greedy (with speculation when p.speculative);
// otherwise every token is drawn by it. Adds to `out` (decode fields only).
void decode(lm_sequence& seq, const lm_vocab& vocab, const fim_format& fmt, std::span<const int32_t> prompt,
            const first_row& first, stop_checker& stops, const gen_params& p, infer::sampler* smp,
            const cancel_token& cancel, gen_outcome& out);

// Both phases, greedy. `seq` must hold a prefix of `prompt`.
gen_outcome generate(lm_sequence& seq, const lm_vocab& vocab, const fim_format& fmt, std::span<const int32_t> prompt,
                     stop_checker& stops, const gen_params& p, const cancel_token& cancel);

// Streams text from token pieces as well-formed UTF-8 (it ends up in JSON
// strings): an incomplete trailing sequence is held back (and dropped at
// flush), and bytes that can never form a character become U+FFFD.
class utf8_stream {
 public:
  std::string push(std::string_view bytes);
  std::string flush();

 private:
  std::string pending_;
};

}  // namespace qf::server::completion
