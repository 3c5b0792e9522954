// Paged KV: contexts drawing blocks from one pool (inference/model/kv_blocks.h).
// A fork (copy_prefix in one pool) references the prefix's blocks instead of
// copying them; a shared block is copied before it is written, so neither
// sequence sees the other's writes; the pool's memory follows the blocks in
// use; a full pool is a clear error that leaves the context as it was; cache
// edits (move_range) and batches work on shared blocks exactly as on a
// private cache.
#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "inference/model/batch.h"
#include "inference/model/context.h"
#include "inference/model/kv_blocks.h"
#include "tests/inference/model/model_test_util.h"

namespace qf::test {
namespace {

using infer::context;
using infer::context_options;
using infer::ggml_type;
using infer::kv_blocks;
using infer::logits_mode;

constexpr double k_tol = 1e-4;

context_options in_pool(const std::shared_ptr<kv_blocks>& pool, int64_t n_ctx = 128) {
  context_options o;
  o.n_ctx = n_ctx;
  o.blocks = pool;
  return o;
}

// Logits after `prompt` then `next`, in a fresh private context.
std::vector<float> alone(const infer::model& m, const std::vector<int32_t>& prompt, int32_t next,
                         ggml_type kv = ggml_type::f32) {
  context c(m, {.n_ctx = 128, .kv_type = kv});
  c.eval(prompt, logits_mode::none);
  const int32_t one[1] = {next};
  c.eval(one, logits_mode::last);
  return copy(c.logits(0));
}

TEST(kv_blocks, a_fork_shares_the_prefix_and_copies_a_shared_block_before_writing) {
  synth_config cfg;
  const synth_model sm = make_synth(cfg);
  auto m = load_synth(sm, "kvb_fork");
  auto pool = std::make_shared<kv_blocks>(*m, 32, ggml_type::f32, 16);
  const auto prompt = some_tokens(40, sm.n_vocab, 3);  // blocks of 16, 16 and 8 positions
  context a(*m, in_pool(pool)), b(*m, in_pool(pool));
  a.eval(prompt, logits_mode::last);
  EXPECT_EQ(pool->n_free(), 32 - 3);
  b.copy_prefix(a, 40);
  EXPECT_EQ(pool->n_free(), 32 - 3) << "a fork takes no block";
  EXPECT_EQ(b.block_table(), a.block_table());
  for (int32_t blk : a.block_table()) EXPECT_EQ(pool->refs(blk), 2);
  EXPECT_EQ(b.kv_bytes(), a.kv_bytes());

  // Each continues differently: b's write goes to a copy of the shared third block.
  const int32_t ta[1] = {5}, tb[1] = {9};
  b.eval(tb, logits_mode::last);
  EXPECT_EQ(pool->n_free(), 32 - 4);
  EXPECT_NE(b.block_table()[2], a.block_table()[2]);
  EXPECT_EQ(b.block_table()[0], a.block_table()[0]);
  a.eval(ta, logits_mode::last);
  EXPECT_LT(rel_diff(a.logits(0), alone(*m, prompt, 5)), k_tol);
  EXPECT_LT(rel_diff(b.logits(0), alone(*m, prompt, 9)), k_tol);

  // Dropping both gives every block back.
  a.clear();
  EXPECT_EQ(pool->n_free(), 32 - 3);  // b still holds its three
  b.clear();
  EXPECT_EQ(pool->n_free(), 32);
}

TEST(kv_blocks, four_documents_with_one_head_hold_it_once) {
  synth_config cfg;
  const synth_model sm = make_synth(cfg);
  auto m = load_synth(sm, "kvb_head");
  auto pool = std::make_shared<kv_blocks>(*m, 64, ggml_type::f16, 16);
  const auto head = some_tokens(160, sm.n_vocab, 4);
  context first(*m, in_pool(pool, 256));
  first.eval(head, logits_mode::none);
  std::vector<std::unique_ptr<context>> docs;
  for (int d = 0; d < 4; ++d) {
    docs.push_back(std::make_unique<context>(*m, in_pool(pool, 256)));
    docs.back()->copy_prefix(first, 160);
    docs.back()->eval(some_tokens(20, sm.n_vocab, 50 + static_cast<uint32_t>(d)), logits_mode::last);
  }
  first.clear();
  // The head's 10 blocks once, and two blocks of its own per document.
  const int64_t used = pool->n_blocks() - pool->n_free();
  EXPECT_EQ(used, 10 + 4 * 2);
  const auto single = static_cast<double>(10 + 2);
  EXPECT_LE(used / single, 1.6);  // four documents for the memory of about 1.5
}

TEST(kv_blocks, a_full_pool_is_an_error_that_changes_nothing) {
  synth_config cfg;
  const synth_model sm = make_synth(cfg);
  auto m = load_synth(sm, "kvb_full");
  auto pool = std::make_shared<kv_blocks>(*m, 3, ggml_type::f32, 16);
  context a(*m, in_pool(pool)), b(*m, in_pool(pool));
  a.eval(some_tokens(20, sm.n_vocab, 1), logits_mode::last);  // two blocks
  const auto p = some_tokens(30, sm.n_vocab, 2);
  try {
    b.eval(p, logits_mode::last);
    FAIL() << "expected a full pool";
  } catch (const infer::model_error& e) {
    EXPECT_NE(std::string(e.what()).find("KV cache full"), std::string::npos) << e.what();
  }
  EXPECT_EQ(b.n_past(), 0);
  EXPECT_EQ(pool->n_free(), 1);
  a.keep_first(10);  // gives one block back
  b.eval(p, logits_mode::last);
  EXPECT_EQ(b.n_past(), 30);
  EXPECT_THROW(kv_blocks(*m, 4, ggml_type::f16, 12), infer::model_error);  // not a power of two
  EXPECT_THROW(kv_blocks(*m, 0), infer::model_error);
}

TEST(kv_blocks, move_range_on_shared_blocks_leaves_the_other_sequence_alone) {
  synth_config cfg;
  const synth_model sm = make_synth(cfg);
  auto m = load_synth(sm, "kvb_move");
  auto pool = std::make_shared<kv_blocks>(*m, 32, ggml_type::f32, 16);
  const auto prompt = some_tokens(50, sm.n_vocab, 7);
  context a(*m, in_pool(pool)), b(*m, in_pool(pool)), priv(*m, {.n_ctx = 128, .kv_type = ggml_type::f32});
  a.eval(prompt, logits_mode::none);
  b.copy_prefix(a, 50);
  priv.eval(prompt, logits_mode::none);
  // Drop positions [5, 21): the rest slides left across block boundaries.
  b.move_range(21, 50, 5);
  priv.move_range(21, 50, 5);
  EXPECT_EQ(b.tokens(), priv.tokens());
  const int32_t t[1] = {3};
  b.eval(t, logits_mode::last);
  priv.eval(t, logits_mode::last);
  EXPECT_LT(rel_diff(b.logits(0), priv.logits(0)), 1e-6) << "paged and contiguous moves agree";
  a.eval(t, logits_mode::last);
  EXPECT_LT(rel_diff(a.logits(0), alone(*m, prompt, 3)), k_tol) << "the fork's source is untouched";
}

TEST(kv_blocks, candidates_forked_in_one_pool_decode_in_one_batch) {
  synth_config cfg;
  cfg.arch = "qwen2";
  const synth_model sm = make_synth(cfg);
  auto m = load_synth(sm, "kvb_batch");
  auto pool = std::make_shared<kv_blocks>(*m, 40, ggml_type::f16, 16);
  const auto prompt = some_tokens(37, sm.n_vocab, 8);
  context root(*m, in_pool(pool));
  root.eval(prompt, logits_mode::last);
  std::vector<std::unique_ptr<context>> forks;
  std::vector<int32_t> next = {root.argmax(0), 1, 2, 3};
  std::vector<infer::batch_entry> es(4);
  for (size_t i = 0; i < 4; ++i) {
    forks.push_back(std::make_unique<context>(*m, in_pool(pool)));
    forks.back()->copy_prefix(root, 37);
    es[i].ctx = forks.back().get();
    es[i].tokens = std::span<const int32_t>(&next[i], 1);
  }
  infer::batch bt(*m);
  bt.eval(es, infer::output_kind::logits);
  for (size_t i = 0; i < 4; ++i)
    EXPECT_LT(rel_diff(forks[i]->logits(0), alone(*m, prompt, next[i], ggml_type::f16)), k_tol) << "fork " << i;
  // Each fork copied the shared partly filled block once; the full blocks stay shared.
  EXPECT_EQ(pool->n_blocks() - pool->n_free(), 3 + 4);
}

}  // namespace
}  // namespace qf::test
