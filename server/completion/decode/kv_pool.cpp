// Slot choice, LRU and chunk shifting for the prefix cache (see the header).
#include "server/completion/decode/kv_pool.h"

#include <algorithm>
#include <utility>

namespace qf::server::completion {

namespace {
// Fewer shared tokens than this are evaluated again rather than copied (a
// copy costs a pass over every layer's cells; a few tokens cost about as much).
constexpr int64_t k_min_copy_tokens = 16;

// The longest run of `cached`, starting right of `from`, equal to `prompt`
// from `from` on and ending before `limit`: {its start in cached, its length}.
std::pair<int64_t, int64_t> longest_shifted_run(std::span<const int32_t> cached, std::span<const int32_t> prompt,
                                                int64_t from, int64_t limit) {
  int64_t best_src = -1, best_len = 0;
  if (from >= limit) return {best_src, best_len};
  const int64_t n_cached = static_cast<int64_t>(cached.size());
  for (int64_t src = from + 1; src < n_cached; ++src) {
    if (cached[src] != prompt[from]) continue;
    int64_t n = 0;
    while (src + n < n_cached && from + n < limit && cached[src + n] == prompt[from + n]) ++n;
    if (n > best_len) {
      best_len = n;
      best_src = src;
    }
  }
  return {best_src, best_len};
}
}  // namespace

kv_pool::kv_pool(lm_backend& backend, const completion_settings& s) : backend_(backend), s_(s) {
  n_ctx_ = s.context_tokens;
  if (backend.n_ctx_train() > 0) n_ctx_ = std::min<int64_t>(n_ctx_, backend.n_ctx_train());
  const size_t per_slot = backend.sequence_bytes(n_ctx_);
  const size_t budget = static_cast<size_t>(s.cache_mib) << 20;
  by_memory_ = per_slot > 0 ? static_cast<int>(std::min<size_t>(budget / per_slot, 1 << 20)) : s.cache_slots;
  set_sessions(1);
}

void kv_pool::set_sessions(int sessions) {
  // This pool's share of the budget: by_memory_ slots fit in all of it.
  const int by_share = by_memory_ / std::max(1, sessions);
  max_slots_ = std::max(1, std::min(s_.cache_slots, by_share));
  // Slots beyond the share go (the last made first); the owners' next
  // requests find their prefixes in the slots left, or evaluate them.
  if (static_cast<int>(slots_.size()) > max_slots_) slots_.resize(static_cast<size_t>(max_slots_));
}

int64_t kv_pool::cached_prefix(std::span<const int32_t> prompt) const {
  int64_t best = 0;
  for (const slot& sl : slots_) best = std::max(best, common_prefix(sl.seq->tokens(), prompt));
  return best;
}

void kv_pool::document_closed(const std::string& uri) {
  for (slot& sl : slots_)
    if (sl.owner == uri) sl.owner.clear();
}

void kv_pool::release(int slot, const std::string& uri) {
  if (slot < 0 || slot >= static_cast<int>(slots_.size()) || slots_[slot].owner != uri) return;
  slots_[slot].owner.clear();
  slots_[slot].last_used = 0;
}

size_t kv_pool::bytes() const {
  size_t b = 0;
  for (const slot& sl : slots_) b += sl.seq->kv_bytes();
  return b;
}

slot_choice kv_pool::acquire(const std::string& uri, std::span<const int32_t> prompt, int exclude) {
  int best = -1, own = -1, lru = -1;
  int64_t best_lcp = -1, own_lcp = -1;
  for (int i = 0; i < static_cast<int>(slots_.size()); ++i) {
    if (i == exclude) continue;
    const slot& sl = slots_[i];
    int64_t lcp = common_prefix(sl.seq->tokens(), prompt);
    if (lcp > best_lcp || (lcp == best_lcp && sl.owner == uri)) {
      best = i;
      best_lcp = lcp;
    }
    if (sl.owner == uri && lcp > own_lcp) {
      own = i;
      own_lcp = lcp;
    }
    if (lru < 0 || sl.last_used < slots_[lru].last_used) lru = i;
  }
  // Always leave at least the last prompt token to evaluate, so that its logits exist.
  const int64_t limit = prompt.empty() ? 0 : static_cast<int64_t>(prompt.size()) - 1;
  // The document's own slot serves the request when it keeps at least half of
  // its cache, or of the prompt where that is shorter (generated tokens past
  // the prompt cannot be kept anyway): the prefix, and the shifted chunk
  // where enabled. Otherwise it holds another region of the document -- the
  // cursor jumped -- and is kept for a jump back: a new slot is made while
  // there is room, else the document's least recently used slot is taken.
  int own_lru = -1;
  bool own_fits = false;
  if (own >= 0) {
    const std::vector<int32_t>& t = slots_[own].seq->tokens();
    const int64_t keepable = std::min<int64_t>(static_cast<int64_t>(t.size()), limit);
    int64_t usable = std::min(own_lcp, limit);
    if (usable * 2 < keepable && s_.reuse_shifted_chunks) {
      const int64_t run = longest_shifted_run(t, prompt, usable, limit).second;
      if (run >= s_.min_chunk_tokens) usable += run;
    }
    own_fits = usable * 2 >= keepable;
    for (int i = 0; i < static_cast<int>(slots_.size()); ++i)
      if (i != exclude && slots_[i].owner == uri && (own_lru < 0 || slots_[i].last_used < slots_[own_lru].last_used))
        own_lru = i;
  }
  int pick = -1;
  if (best >= 0) {
    const slot& b = slots_[best];
    const bool loses_nothing = best_lcp == static_cast<int64_t>(b.seq->tokens().size());
    if ((best == own && own_fits) || b.owner.empty() || loses_nothing) pick = best;
    else if (own_fits && best_lcp <= own_lcp + s_.min_chunk_tokens) pick = own;
  }
  if (pick < 0 && own_fits) pick = own;
  slot_choice out;
  if (pick < 0 && static_cast<int>(slots_.size()) < max_slots_) {
    slots_.push_back(slot{backend_.new_sequence(n_ctx_), {}, 0});
    pick = static_cast<int>(slots_.size()) - 1;
    out.new_slot = true;
  }
  if (pick < 0 && lru < 0) {
    // Everything excluded: only possible with a single slot.
    pick = exclude;
  }
  if (pick < 0 && own_lru >= 0) {
    // Full, after a jump: a free slot (its document closed, its state
    // released), else the region left longest ago.
    int free = -1;
    for (int i = 0; i < static_cast<int>(slots_.size()); ++i)
      if (i != exclude && slots_[i].owner.empty() && (free < 0 || slots_[i].last_used < slots_[free].last_used))
        free = i;
    pick = free >= 0 ? free : own_lru;
  }
  if (pick < 0) {
    // Full: take the most useful slot if it covers half of the prompt, else the LRU one.
    pick = (best >= 0 && best_lcp * 2 >= static_cast<int64_t>(prompt.size())) ? best : lru;
  }
  slot& sl = slots_[pick];
  sl.owner = uri;
  sl.last_used = ++tick_;
  lm_sequence& seq = *sl.seq;
  int64_t lcp = std::min(common_prefix(seq.tokens(), prompt), limit);
  if (best >= 0 && best != pick && std::min(best_lcp, limit) >= lcp + k_min_copy_tokens) {
    // Another slot holds more of this prompt: copy its cells rather than recompute them.
    const int64_t n = std::min(best_lcp, limit);
    seq.copy_prefix(*slots_[best].seq, n);
    out.copied = n - lcp;
    lcp = n;
  }
  if (limit >= lcp + k_min_copy_tokens) {
    // Another pool's sequence on the same engine (the daemon: another
    // window's) may hold more of it than this slot would keep, its shifted
    // chunk included: its cells are copied too (nothing in process).
    int64_t keeps = lcp;
    if (static_cast<int64_t>(seq.tokens().size()) > lcp && s_.reuse_shifted_chunks) {
      const int64_t run = longest_shifted_run(seq.tokens(), prompt, lcp, limit).second;
      if (run >= s_.min_chunk_tokens) keeps += run;
    }
    const int64_t n = backend_.adopt_prefix(seq, prompt.first(static_cast<size_t>(limit)), keeps + k_min_copy_tokens);
    if (n > lcp) {
      out.copied += n - lcp;
      lcp = n;
    }
  }
  if (static_cast<int64_t>(seq.tokens().size()) > lcp && s_.reuse_shifted_chunks && lcp < limit) {
    // The longest cached run, right of lcp, equal to the prompt at lcp.
    const auto [best_src, best_len] = longest_shifted_run(seq.tokens(), prompt, lcp, limit);
    if (best_len >= s_.min_chunk_tokens) {
      seq.keep_first(best_src + best_len);
      seq.move_range(best_src, best_src + best_len, lcp);
      out.shifted = best_len;
      lcp += best_len;
    }
  }
  if (static_cast<int64_t>(seq.tokens().size()) > lcp) seq.keep_first(lcp);
  out.seq = &seq;
  out.slot = pick;
  out.reused = static_cast<int64_t>(seq.tokens().size());
  return out;
}

}  // namespace qf::server::completion
