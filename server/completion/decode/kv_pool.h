// The prefix cache: a few KV sequences ("slots") shared by all open documents.
//
// Each slot holds the tokens of the last prompt (and generation) run in it and
// remembers which document used it last. A request takes the slot whose
// cached tokens share the longest prefix with its prompt, so context common to
// several documents (the same extra-context block, the same file head) is
// computed once and reused from whichever slot has it: the set of slots acts
// as a small token-prefix tree whose branches are the slots. A slot holding
// another document's state is only overwritten when the request extends it or
// when no free slot is left, then the least recently used one goes. A slot
// of the request's own document that would lose more than half of its cache
// holds the region the cursor jumped away from: it is kept for a jump back
// (the prompt layouts of those regions are kept too, prompt_layout.h), and
// the request takes a new slot while there is room, else the document's
// least recently used slot. The
// number of slots is bounded by the memory budget (MiB) as well as by a count
// (completion.cacheSlots). The daemon gives each editor session a pool of its
// own on one shared engine; the pools share the budget: each keeps at most
// cacheMiB / sessions of slots (and at least one slot), so the sessions'
// slots together stay within cacheMiB while the budget holds one slot each.
// Owners are the requests' cache keys: one per buffer, so two windows holding
// the same URI with different contents own different slots. When the slot a
// request gets shares less of its prompt than another slot that must not be
// overwritten (another document's, with more after the shared part), the
// longer prefix is copied from that slot (lm_sequence::copy_prefix: the KV
// cells, not recomputed): a second document with the same head, or a second
// window on the same file, evaluates only what differs. Each slot still holds
// its own copy of the shared cells. The same holds across the daemon's
// sessions on one engine (each with a pool of its own): a slot that keeps
// less of the prompt than another session's sequence holds takes that
// longer prefix (lm_backend::adopt_prefix); both count as `copied`.
//
// After an edit in the middle of the prompt (e.g. lines deleted, or the prefix
// window sliding forward) the tokens after the edit are still in the cache,
// one chunk left of where they were; when enabled, the longest such chunk is
// shifted into place with move_range (re-rotating K) instead of re-evaluated.
// Its K/V were computed with the old tokens in front, so the model's view is
// approximate; docs/completion.md reports the effect.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "server/completion/api/lm.h"
#include "server/completion/api/settings.h"

namespace qf::server::completion {

struct slot_choice {
  lm_sequence* seq = nullptr;
  int slot = -1;
  int64_t reused = 0;         // prompt tokens now in the cache (prefix + shifted chunk)
  int64_t shifted = 0;        // of which moved by move_range
  int64_t copied = 0;         // of which copied from another slot's cache (or another session's)
  bool new_slot = false;
};

class kv_pool {
 public:
  kv_pool(lm_backend& backend, const completion_settings& s);

  // Picks a slot for `prompt`, cuts its cache down to what `prompt` can reuse
  // (keeping at least one prompt token to evaluate, so logits exist) and marks
  // it as used by `uri`. `exclude` keeps one slot out of the choice (background
  // work that must not overwrite the live state of a document).
  slot_choice acquire(const std::string& uri, std::span<const int32_t> prompt, int exclude = -1);
  // Longest prefix of `prompt` cached in any slot (no change to the slots).
  int64_t cached_prefix(std::span<const int32_t> prompt) const;
  void document_closed(const std::string& uri);
  // `uri` no longer wants the state in `slot` (a layout replaced or dropped,
  // e.g. a rebase's): the slot is free, taken before any other owner's; its
  // cells stay (for copying) until then. Nothing when `uri` does not own it.
  void release(int slot, const std::string& uri);
  // Editor sessions sharing the memory budget, each with a pool like this
  // one (>= 1; 1 in process): this pool keeps at most cacheSlots slots
  // within budget / sessions, and at least one. Slots beyond a bound that
  // shrinks are dropped (the last made first); call it between requests.
  void set_sessions(int sessions);
  int max_slots() const { return max_slots_; }
  int n_slots() const { return static_cast<int>(slots_.size()); }
  size_t bytes() const;
  int64_t n_ctx() const { return n_ctx_; }

 private:
  struct slot {
    std::unique_ptr<lm_sequence> seq;
    std::string owner;
    uint64_t last_used = 0;
  };
  lm_backend& backend_;
  const completion_settings& s_;
  std::vector<slot> slots_;
  int max_slots_ = 1;
  int by_memory_ = 1;
  int64_t n_ctx_ = 0;
  uint64_t tick_ = 0;
};

}  // namespace qf::server::completion
