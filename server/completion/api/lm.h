// The slice of the inference engine that the completion pipeline uses.
//
// The pipeline (prompt layout, prefix cache, budgeted generation, speculation)
// is written against these small interfaces instead of qf::infer directly, so
// that (a) it can be unit-tested deterministically with a scripted test model
// (tests/server/completion/fake_lm.h) and with deliberately slow engines, and (b) the
// adapter in engine_backend.cpp is the only file that knows the engine's exact
// types. The shapes mirror qf::infer::context / tokenizer one to one: a
// sequence is one KV cache whose tokens sit at positions 0..size()-1, edited
// only by keep_first (truncate), move_range (shift a chunk left) and eval
// (append, cancellable between layers/ubatches).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "inference/core/cancellation.h"

namespace qf::server::completion {

// Special token ids; -1 when the model has none.
struct lm_specials {
  int32_t bos = -1, eos = -1, eot = -1, pad = -1;
  int32_t fim_pre = -1, fim_suf = -1, fim_mid = -1, fim_pad = -1, fim_rep = -1, fim_sep = -1;
};

class lm_vocab {
 public:
  virtual ~lm_vocab() = default;
  // Plain text to ids: no BOS, special-token text is NOT parsed (user text can
  // never smuggle control tokens into a prompt).
  virtual std::vector<int32_t> encode(std::string_view text) const = 0;
  virtual const std::string& piece(int32_t id) const = 0;  // raw bytes of the token
  virtual bool is_control(int32_t id) const = 0;
  virtual int32_t n_vocab() const = 0;
  virtual const lm_specials& specials() const = 0;
  virtual bool add_bos() const = 0;
  // Id of the token whose text is exactly `text` (control tokens included), or -1.
  virtual int32_t find_token(std::string_view text) const = 0;
};

// How many tokens `a` and `b` share at their start.
inline int64_t common_prefix(std::span<const int32_t> a, std::span<const int32_t> b) {
  const size_t n = std::min(a.size(), b.size());
  size_t i = 0;
  while (i < n && a[i] == b[i]) ++i;
  return static_cast<int64_t>(i);
}

enum class lm_logits { none, last, all };
// What the rows of an eval give: each row's best token and its
// log-probability (reduced where the logits are, e.g. on the device), or the
// whole logits rows as well (sampling reads them on the host).
enum class lm_output { best, full };

struct lm_eval_result {
  int64_t n_evaluated = 0;  // tokens committed to the cache by this call
  bool cancelled = false;
};

// One KV sequence.
class lm_sequence {
 public:
  virtual ~lm_sequence() = default;
  virtual int64_t n_ctx() const = 0;
  virtual const std::vector<int32_t>& tokens() const = 0;
  virtual void keep_first(int64_t n) = 0;
  virtual void move_range(int64_t src_begin, int64_t src_end, int64_t dst_begin) = 0;
  virtual lm_eval_result eval(std::span<const int32_t> toks, lm_logits mode, const cancel_token& cancel,
                              lm_output out) = 0;
  // Greedy decoding: the most likely token after the i-th token of the last
  // eval (mode all) or after its last token (mode last, i = 0), the lowest id
  // on ties; -1 when the last eval produced no such row. Engines may reduce
  // the logits on the device and never copy them out.
  virtual int32_t best_token(int64_t i = 0) const = 0;
  // The natural-log probability of best_token(i) under the model (<= 0); NaN
  // when the last eval produced no such row.
  virtual float best_logprob(int64_t i = 0) const = 0;
  // Row i's logits when the last eval asked for lm_output::full; empty otherwise.
  virtual std::span<const float> logits(int64_t i = 0) const = 0;
  virtual size_t kv_bytes() const = 0;
  // Makes this sequence hold src's first n tokens (n <= src's size): what it
  // shares with them at the start stays, the rest of src's cache is copied
  // where the engine can (one sequence forked into several), else evaluated.
  virtual void copy_prefix(const lm_sequence& src, int64_t n) {
    const std::vector<int32_t>& want = src.tokens();
    const int64_t same = std::min(common_prefix(tokens(), want), n);
    keep_first(same);
    if (same < n)
      eval(std::span<const int32_t>(want).subspan(static_cast<size_t>(same), static_cast<size_t>(n - same)),
           lm_logits::none, {}, lm_output::best);
  }
};

// One sequence's part of lm_backend::eval_batch: what seq->eval(toks, mode,
// cancel, out) would do alone, with its result.
struct lm_batch_entry {
  lm_sequence* seq = nullptr;
  std::span<const int32_t> toks;
  lm_logits mode = lm_logits::last;
  cancel_token cancel{};
  lm_eval_result result{};
};

// How busy a shared engine is (step_loop.h: several sequences, each on its
// own thread, whose evals are run in shared steps). What the caller can expect
// an eval to wait for; an engine that serves one sequence at a time reports
// zeros (nothing but the caller's own work).
struct lm_load {
  int sequences = 0;  // other sequences with an eval waiting or running now
  // The rows an eval of the caller would wait for: the others' queued prompt
  // rows that go before it (a shared engine's step loop counts those at the
  // caller's priority or higher, not decode tokens, which share its step).
  int64_t rows_waiting = 0;
  double ms_per_step = 0;    // recent time of one step (moving average); 0: unknown
  double ms_per_row = 0;     // recent engine time per prompt row in steps with prefill; 0: unknown
  int foreground = 0;        // of `sequences`, those running requests (not background work)
};

class lm_backend {
 public:
  virtual ~lm_backend() = default;
  virtual const lm_vocab& vocab() const = 0;
  virtual std::unique_ptr<lm_sequence> new_sequence(int64_t n_ctx) = 0;
  // KV bytes one cached token costs (for the memory budget).
  virtual size_t kv_bytes_per_token() const = 0;
  // KV bytes a sequence of n_ctx tokens made by new_sequence holds (an engine
  // may keep room beside it for its forks).
  virtual size_t sequence_bytes(int64_t n_ctx) const { return kv_bytes_per_token() * static_cast<size_t>(n_ctx); }
  // `count` new sequences that hold parent's first n tokens by sharing its
  // cache (nothing copied or evaluated), each with room for `more` tokens of
  // its own; the parent keeps working beside them. Empty when the engine
  // cannot share the parent's cache or has no room for that many (the caller
  // then copies: lm_sequence::copy_prefix). They must go before the parent.
  virtual std::vector<std::unique_ptr<lm_sequence>> fork(lm_sequence& parent, int64_t n, int count, int64_t more) {
    (void)parent, (void)n, (void)count, (void)more;
    return {};
  }
  virtual int64_t n_ctx_train() const = 0;
  virtual std::string describe() const = 0;
  // Evaluates every entry, each as its sequence's eval would alone (same
  // outputs, same cancellation per entry), in as few engine passes as the
  // engine can: one pass reads the weights once for all the entries' rows.
  // The sequences must be this backend's and distinct. The default runs them
  // one after another.
  virtual void eval_batch(std::span<lm_batch_entry> entries, lm_output out) {
    for (lm_batch_entry& e : entries) e.result = e.seq->eval(e.toks, e.mode, e.cancel, out);
  }
  // How busy the engine is now, seen from a caller of this backend (lm_load).
  virtual lm_load load() const { return {}; }
  // Makes dst (one of this backend's sequences) hold the longest prefix of
  // `prompt` cached in any other sequence of this engine, when it is longer
  // than what dst already shares with `prompt` and at least min_tokens: the
  // cells are copied (copy_prefix), not evaluated, and anything of dst after
  // what it shares with that sequence goes. Returns the prompt tokens dst
  // now holds; 0 when nothing was adopted (dst unchanged). An engine shared
  // by several owners (step_loop.h: the daemon's sessions, each with its own
  // KV slots) looks in every owner's sequences; the default adopts nothing.
  virtual int64_t adopt_prefix(lm_sequence& dst, std::span<const int32_t> prompt, int64_t min_tokens) {
    (void)dst, (void)prompt, (void)min_tokens;
    return 0;
  }
};

}  // namespace qf::server::completion
