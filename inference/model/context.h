// One sequence being evaluated: its KV cache (F16 by default) and the scratch
// buffers of the forward pass, all allocated once at construction.
//
// The cache holds tokens() at positions 0..size()-1, in blocks of a KV block
// pool (kv_blocks.h) listed in the context's block table: a private pool
// sized for n_ctx unless context_options::blocks names one shared with other
// contexts, where a fork (copy_prefix) references the blocks of the common
// prefix instead of copying them and a shared block is copied before it is
// written (copy on write). eval() appends tokens: a run of more than one
// token is a prefill, split in ubatches of n_ubatch tokens; a single token is
// a decode step. Cancellation is polled between layers and between ubatches;
// whole ubatches already done stay cached. keep_first()/move_range() are the
// operations prefix reuse needs (drop a tail; slide a kept chunk to earlier
// positions, re-rotating K).
//
// Logits are computed only where asked (logits_mode): the output projection
// runs only for those rows. Greedy callers ask for output_kind::argmax: the
// backend reduces each row to its best token and only the ids are copied back.
//
// On a backend with step graphs (CUDA), a ubatch of up to k_graph_tokens
// tokens (a decode step, a speculative verification) is recorded once per
// shape (tokens, output rows, output kind) and replayed on later steps; the
// ops read positions, ids and the block table from device buffers, so the
// recording stays valid.
// Such a step is not cancellable half-way (it is one launch); prefill ubatches
// still poll cancellation between layers.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <unordered_map>
#include <vector>

#include "inference/core/cancellation.h"
#include "inference/core/ggml_types.h"
#include "inference/model/kv_blocks.h"
#include "inference/model/model.h"

namespace qf::infer {

struct context_options {
  int64_t n_ctx = 4096;               // cache capacity in tokens
  ggml_type kv_type = ggml_type::f16; // f16 or f32 (a shared pool's own type when `blocks` is set)
  int64_t n_ubatch = 512;             // tokens per forward pass during prefill
  // Called after each ubatch is committed with (tokens committed by this eval,
  // tokens asked for): prefill progress. May cancel the eval's token.
  std::function<void(int64_t done, int64_t total)> on_ubatch = nullptr;
  // Replay recorded decode steps where the backend supports it (the caller
  // decides; the engine reads no environment).
  bool step_graphs = true;
  // The block pool the cache lives in, shared with other contexts of the
  // same model; null: a private pool of n_ctx cells (rounded up to blocks).
  std::shared_ptr<kv_blocks> blocks = nullptr;
};

enum class logits_mode { none, last, all };
// What the output rows give back: whole logits rows, or only each row's argmax.
enum class output_kind { logits, argmax };

struct eval_result {
  int64_t n_evaluated = 0;  // tokens committed to the cache by this call
  bool cancelled = false;
};

struct context_state;     // internal: scratch buffers (context.cpp)
struct forward_segment;   // architecture.h
class step_graph;      // inference/backend/backend.h

class context {
 public:
  // Throws model_error if the options are invalid (n_ctx < 1, kv_type not f16/f32)
  // or the backend cannot allocate the cache. The model must outlive the context.
  context(const model& m, const context_options& opts);
  ~context();
  context(const context&) = delete;
  context& operator=(const context&) = delete;

  const model& mdl() const { return model_; }
  int64_t n_ctx() const;
  int64_t n_past() const { return static_cast<int64_t>(tokens_.size()); }
  const std::vector<int32_t>& tokens() const { return tokens_; }

  // Drops cached tokens from position n on (n >= size(): no-op).
  void keep_first(int64_t n);
  void clear() { keep_first(0); }
  // Moves cached tokens [src_begin, src_end) to start at dst_begin (< src_begin
  // when it differs), re-rotating their K by the position delta, and drops
  // everything after them; tokens before dst_begin are kept. Throws
  // std::out_of_range on bad arguments.
  void move_range(int64_t src_begin, int64_t src_end, int64_t dst_begin);

  // Makes this context hold src's first n tokens: the tokens it shares with
  // them at the start stay, the rest come from src's cache, not recomputed:
  // by reference when both live in one block pool (the blocks are shared
  // until either writes into one), else copied cell by cell. Anything after
  // them is dropped. src must be of the same model and KV type. Throws
  // model_error otherwise, when n exceeds src's tokens or this context's
  // n_ctx, or when the pool has no free block for a copy.
  void copy_prefix(const context& src, int64_t n);

  // Appends `toks` to the cache and evaluates them. Throws model_error if they
  // do not fit in n_ctx or a token id is out of range. On cancel, whole ubatches
  // already done stay cached and a partial one is dropped; the result says how
  // many tokens were committed.
  eval_result eval(std::span<const int32_t> toks, logits_mode mode, const cancel_token& cancel = {},
                   output_kind kind = output_kind::logits);

  // Logits of the i-th token of the last eval (mode all), or of its last token
  // (i = 0, mode last). Empty span when the last eval produced none, or only argmaxes.
  std::span<const float> logits(int64_t i = 0) const;
  // The best token of output row i (lowest id on ties), for either output
  // kind; -1 when the last eval produced no such row.
  int32_t argmax(int64_t i = 0) const;
  // The log-probability of argmax(i) under row i's softmax (<= 0), for either
  // output kind (the argmax kind reduces it on the backend); NaN without that row.
  float argmax_logprob(int64_t i = 0) const;
  int64_t n_logits_rows() const { return n_logit_rows_; }

  // Largest ubatch replayed as a step graph: a decode step, a speculative
  // verification (1 + up to 8 drafted tokens), a keystroke's few new prompt tokens.
  static constexpr int64_t k_graph_tokens = 16;
  // Step graphs recorded so far, and whether they are in use (tests, stats).
  size_t n_step_graphs() const { return graphs_.size(); }
  bool step_graphs_active() const { return graphs_on_; }

  // Memory the cache holds: a private pool's whole size; in a shared pool,
  // the blocks this context references (shared ones counted in each).
  size_t kv_bytes() const;
  const kv_blocks& blocks() const { return *blocks_; }
  const std::vector<int32_t>& block_table() const { return table_; }

 private:
  friend class batch;  // evaluates several contexts in one pass (batch.h)
  // Throws model_error unless toks fit after the cached tokens and every id is in the vocabulary.
  void check_appendable(std::span<const int32_t> toks) const;
  // Makes the block table cover positions [0, n) with blocks this context
  // may write from n_past() on (copying a shared partly filled block first),
  // and uploads it when it changed. Throws model_error when the pool has no
  // free block (the table is then as before).
  void reserve_cells(int64_t n);
  // Drops the blocks past the cached tokens.
  void trim_blocks();
  // Makes block i of the table this context's own (copies it if shared).
  void own_block(size_t i);
  // Copies cells between two runs of positions through the block tables
  // (src_table in src_pool), layer by layer, in runs within blocks.
  void copy_cells(const kv_blocks& src_pool, const std::vector<int32_t>& src_table, int64_t src_pos, int64_t dst_pos,
                  int64_t n);
  // Copies n physical cells from s_cell of src_pool to d_cell of this
  // context's pool, every layer's K and V.
  void copy_run(const kv_blocks& src_pool, int64_t s_cell, int64_t d_cell, int64_t n);
  // Uploads the block table when it changed since the last upload.
  void sync_table();
  // The segment of a pass over this context's rows.
  forward_segment segment(int64_t row0, int64_t n_rows, int64_t pos0, const buffer* pos) const;
  // One forward pass over toks[0..n) at positions n_past().., logits for the
  // last n_out rows written to logits_[out_row0..]. Returns false if cancelled.
  bool run_ubatch(std::span<const int32_t> toks, int64_t n_out, int64_t out_row0, const cancel_token& cancel);
  // Runs the forward pass (and the argmax reduction) of a ubatch already
  // uploaded, directly or through its step graph. Returns false if cancelled.
  bool run_forward(int64_t n, int64_t pos0, int64_t n_out, const cancel_token& cancel);

  const model& model_;
  context_options opts_;
  std::shared_ptr<kv_blocks> blocks_;
  std::vector<int32_t> table_;  // block of each block_cells positions held (and reserved)
  bool table_dirty_ = false;    // table_ differs from the device copy
  std::unique_ptr<context_state> st_;
  std::vector<int32_t> tokens_;
  std::vector<float> logits_;    // [n_logit_rows_][n_vocab]
  std::vector<int32_t> pos_host_;  // [n_ubatch] positions staged for upload
  std::vector<int32_t> argmax_;    // [n_logit_rows_] when out_kind_ is argmax
  std::vector<float> argmax_lp_;   // [n_logit_rows_] their log-probabilities
  int64_t n_logit_rows_ = 0;
  output_kind out_kind_ = output_kind::logits;
  bool graphs_on_ = false;
  std::unordered_map<int64_t, std::unique_ptr<step_graph>> graphs_;  // by step shape
};

}  // namespace qf::infer
