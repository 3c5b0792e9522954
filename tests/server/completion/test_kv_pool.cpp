// Prefix cache: longest-common-prefix slot choice, sharing across documents,
// LRU eviction, the memory budget, and chunk reuse by shifting.
#include <gtest/gtest.h>

#include <numeric>

#include "server/completion/decode/kv_pool.h"
#include "tests/server/completion/fake_lm.h"

using namespace qf::server::completion;
using qf::test::fake_backend;

namespace {

std::vector<int32_t> seq_of(int32_t from, int n) {
  std::vector<int32_t> v(n);
  std::iota(v.begin(), v.end(), from);
  return v;
}

std::vector<int32_t> cat(std::vector<int32_t> a, const std::vector<int32_t>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

void fill(slot_choice& c, std::span<const int32_t> prompt) {
  c.seq->eval(prompt.subspan(c.seq->tokens().size()), lm_logits::last, {}, lm_output::best);
}

}  // namespace

TEST(kv_pool, reuses_the_longest_common_prefix_and_leaves_one_token) {
  fake_backend be;
  completion_settings s;
  kv_pool pool(be, s);
  auto p1 = seq_of(1, 50);
  slot_choice c = pool.acquire("a", p1);
  EXPECT_TRUE(c.new_slot);
  EXPECT_EQ(c.reused, 0);
  fill(c, p1);
  // Same prompt again: all but the last token reused (its logits are needed).
  slot_choice c2 = pool.acquire("a", p1);
  EXPECT_EQ(c2.slot, c.slot);
  EXPECT_EQ(c2.reused, 49);
  // One token appended.
  auto p2 = cat(p1, {99});
  fill(c2, p1);
  slot_choice c3 = pool.acquire("a", p2);
  EXPECT_EQ(c3.reused, 50);
  EXPECT_EQ(pool.cached_prefix(p2), 50);
}

TEST(kv_pool, documents_share_a_common_head_without_destroying_each_other) {
  fake_backend be;
  completion_settings s;
  s.cache_slots = 3;
  kv_pool pool(be, s);
  auto head = seq_of(1, 40);
  auto pa = cat(head, seq_of(100, 20));
  auto pb = cat(head, seq_of(200, 20));
  slot_choice a = pool.acquire("a", pa);
  fill(a, pa);
  // B shares the head with A's slot but must not overwrite A's state: a new
  // slot, which starts from a copy of the head's cells (not recomputed).
  const int64_t evaluated_before = be.stats->evaluated;
  slot_choice b = pool.acquire("b", pb);
  EXPECT_NE(b.slot, a.slot);
  EXPECT_EQ(b.reused, 40);
  EXPECT_EQ(b.copied, 40);
  fill(b, pb);
  EXPECT_EQ(be.stats->evaluated - evaluated_before, 20) << "only what differs from the head is evaluated";
  EXPECT_EQ(be.stats->copies, 1);
  // Both are still warm.
  EXPECT_EQ(pool.acquire("a", pa).reused, 59);
  EXPECT_EQ(pool.acquire("b", pb).reused, 59);
  // A request that extends B's cache exactly (nothing lost) may use it whoever asks.
  auto pb_longer = cat(pb, {7, 8});
  slot_choice c = pool.acquire("c", pb_longer);
  EXPECT_EQ(c.slot, b.slot);
  EXPECT_EQ(c.reused, 59);  // B's slot held 59 after its own last request
}

TEST(kv_pool, lru_eviction_when_full) {
  fake_backend be;
  completion_settings s;
  s.cache_slots = 2;
  kv_pool pool(be, s);
  auto pa = seq_of(1, 30), pb = seq_of(1000, 30), pc = seq_of(2000, 30);
  slot_choice a = pool.acquire("a", pa);
  fill(a, pa);
  slot_choice b = pool.acquire("b", pb);
  fill(b, pb);
  pool.acquire("a", pa);  // a is now more recent than b
  slot_choice c = pool.acquire("c", pc);
  EXPECT_EQ(c.slot, b.slot);
  EXPECT_EQ(pool.n_slots(), 2);
  EXPECT_EQ(pool.cached_prefix(pa), 29);
}

TEST(kv_pool, memory_budget_bounds_the_slot_count) {
  fake_backend be;
  be.bytes_per_token = 1 << 10;  // 1 KiB a token
  completion_settings s;
  s.context_tokens = 2048;      // 2 MiB a slot
  s.cache_mib = 5;
  s.cache_slots = 8;
  kv_pool pool(be, s);
  EXPECT_EQ(pool.max_slots(), 2);
  s.cache_mib = 1;  // less than one slot still gives one
  kv_pool small(be, s);
  EXPECT_EQ(small.max_slots(), 1);
}

TEST(kv_pool, deleted_tokens_mid_prompt_reuse_the_rest_by_shifting) {
  fake_backend be;
  completion_settings s;
  s.reuse_shifted_chunks = true;
  s.min_chunk_tokens = 16;
  kv_pool pool(be, s);
  auto head = seq_of(1, 10), gone = seq_of(500, 5), tail = seq_of(600, 40);
  auto before = cat(cat(head, gone), tail);
  auto after = cat(cat(head, tail), {9});
  slot_choice a = pool.acquire("a", before);
  fill(a, before);
  slot_choice b = pool.acquire("a", after);
  EXPECT_EQ(b.shifted, 40);
  EXPECT_EQ(b.reused, 50);
  EXPECT_EQ(be.stats->moves, 1);
  std::vector<int32_t> expect(after.begin(), after.begin() + 50);
  EXPECT_EQ(b.seq->tokens(), expect);

  // Disabled: only the common prefix is kept (one slot: no other to keep the old state in).
  fake_backend be2;
  s.reuse_shifted_chunks = false;
  s.cache_slots = 1;
  kv_pool pool2(be2, s);
  slot_choice c = pool2.acquire("a", before);
  fill(c, before);
  EXPECT_EQ(pool2.acquire("a", after).reused, 10);
}

TEST(kv_pool, a_jump_keeps_the_region_left_for_a_jump_back) {
  fake_backend be;
  completion_settings s;
  s.cache_slots = 3;
  kv_pool pool(be, s);
  // Three regions of one document: the same head, then each region's own text.
  auto head = seq_of(1, 20);
  auto pa = cat(head, seq_of(100, 60)), pb = cat(head, seq_of(200, 60)), pc = cat(head, seq_of(300, 60)),
       pd = cat(head, seq_of(400, 60));
  slot_choice a = pool.acquire("doc", pa);
  fill(a, pa);
  // The cursor jumps to b: a's slot would lose most of its cache, so b gets a
  // new slot, starting from a copy of the head.
  slot_choice b = pool.acquire("doc", pb);
  EXPECT_NE(b.slot, a.slot);
  EXPECT_TRUE(b.new_slot);
  EXPECT_EQ(b.copied, 20);
  fill(b, pb);
  // Back to a, one token typed: a's slot is as it was.
  auto pa2 = cat(pa, {7});
  slot_choice back = pool.acquire("doc", pa2);
  EXPECT_EQ(back.slot, a.slot);
  EXPECT_EQ(back.reused, 80);
  fill(back, pa2);
  slot_choice c = pool.acquire("doc", pc);
  fill(c, pc);
  EXPECT_EQ(pool.n_slots(), 3);
  // Full: the region left longest ago (b) goes, not the one just left (c).
  slot_choice d = pool.acquire("doc", pd);
  EXPECT_EQ(d.slot, b.slot);
  fill(d, pd);
  EXPECT_EQ(pool.acquire("doc", cat(pc, {7})).reused, 80);
  EXPECT_EQ(pool.cached_prefix(pa2), 81);
  // Typing on in one region keeps using its slot (nothing is lost).
  EXPECT_EQ(pool.acquire("doc", cat(pd, {8})).slot, d.slot);
}

TEST(kv_pool, a_released_slot_goes_before_a_region_left) {
  fake_backend be;
  completion_settings s;
  s.cache_slots = 3;
  kv_pool pool(be, s);
  auto pa = seq_of(1, 40), pb = seq_of(100, 40), pb_full = seq_of(200, 40), pc = seq_of(300, 40);
  slot_choice a = pool.acquire("doc", pa);
  fill(a, pa);
  slot_choice b = pool.acquire("doc", pb);
  fill(b, pb);
  slot_choice r = pool.acquire("doc", pb_full, b.slot);  // a rebase of b, warmed beside it
  fill(r, pb_full);
  pool.release(r.slot, "doc");    // the rebase was dropped
  // The next jump takes the released slot, not a's region (the least recently used one).
  slot_choice c = pool.acquire("doc", pc);
  EXPECT_EQ(c.slot, r.slot);
  EXPECT_EQ(pool.cached_prefix(pa), 40);
  EXPECT_EQ(pool.cached_prefix(pb), 40);
}

TEST(kv_pool, a_jump_does_not_take_another_documents_slot_while_one_is_free) {
  fake_backend be;
  completion_settings s;
  s.cache_slots = 2;
  kv_pool pool(be, s);
  auto pa = seq_of(1, 40), px = seq_of(500, 40), pa_far = seq_of(900, 40);
  slot_choice a = pool.acquire("a", pa);
  fill(a, pa);
  slot_choice x = pool.acquire("x", px);
  fill(x, px);
  // Full: a's jump overwrites a's own slot, never x's.
  slot_choice j = pool.acquire("a", pa_far);
  EXPECT_EQ(j.slot, a.slot);
  EXPECT_EQ(pool.cached_prefix(px), 40);
}

TEST(kv_pool, excluded_slot_is_left_alone) {
  fake_backend be;
  completion_settings s;
  kv_pool pool(be, s);
  auto p = seq_of(1, 30);
  slot_choice a = pool.acquire("a", p);
  fill(a, p);
  slot_choice b = pool.acquire("a", cat(p, {5}), a.slot);
  EXPECT_NE(b.slot, a.slot);
  EXPECT_EQ(pool.acquire("a", p).reused, 29);
}

TEST(kv_pool, sessions_share_the_memory_budget) {
  fake_backend be;
  be.bytes_per_token = 1 << 10;  // 1 KiB a token
  completion_settings s;
  s.context_tokens = 1024;  // 1 MiB a slot
  s.cache_mib = 8;          // 8 slots in all
  s.cache_slots = 3;
  kv_pool pool(be, s);
  EXPECT_EQ(pool.max_slots(), 3);  // one session: cacheSlots
  for (int i = 0; i < 3; ++i) {
    auto prompt = seq_of(100 * (i + 1), 20);
    slot_choice c = pool.acquire("doc" + std::to_string(i), prompt);
    fill(c, prompt);
  }
  EXPECT_EQ(pool.n_slots(), 3);
  pool.set_sessions(2);  // 4 slots each: cacheSlots still binds
  EXPECT_EQ(pool.max_slots(), 3);
  pool.set_sessions(4);  // 2 slots each: the slot made last goes
  EXPECT_EQ(pool.max_slots(), 2);
  EXPECT_EQ(pool.n_slots(), 2);
  EXPECT_LE(pool.bytes(), (size_t{8} << 20) / 4);
  EXPECT_EQ(pool.cached_prefix(seq_of(100, 20)), 20);
  EXPECT_EQ(pool.cached_prefix(seq_of(300, 20)), 0);
  pool.set_sessions(16);  // less than a slot each: one
  EXPECT_EQ(pool.max_slots(), 1);
  EXPECT_EQ(pool.n_slots(), 1);
  pool.set_sessions(1);
  EXPECT_EQ(pool.max_slots(), 3);
}
