// context (see context.h): allocates the KV cache and scratch once, splits an
// eval into ubatches, runs the architecture's forward pass on each, copies out
// logits where asked, and implements the cache edits prefix reuse needs.
//
// Prefill (n > 1 tokens) and decode (n == 1) share the forward pass but take
// different kernel paths below it: GEMM vs GEMV matmuls, attention split over
// items of (token, KV head) vs KV heads split into chunks of query heads.
#include "inference/model/context.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>
#include <cstdlib>
#include <stdexcept>
#include <string>

#include "inference/backend/backend.h"
#include "inference/model/architecture.h"
#include "inference/model/context_state.h"
#include "inference/sampling/sampler.h"

namespace qf::infer {

void alloc_scratch(backend& be, const hparams& hp, context_state& s) {
  const size_t nu = static_cast<size_t>(s.n_ubatch), f = sizeof(float);
  s.ids = be.alloc(nu * sizeof(int32_t));              // int32 [n_ubatch]
  s.pos = be.alloc(nu * sizeof(int32_t));              // int32 [n_ubatch]
  s.x = be.alloc(nu * hp.n_embd * f);                  // [n_ubatch][n_embd]
  s.xb = be.alloc(nu * hp.n_embd * f);                 // [n_ubatch][n_embd]
  s.q = be.alloc(nu * hp.n_embd_q() * f);              // [n_ubatch][n_head][head_dim]
  s.k = be.alloc(nu * hp.n_embd_kv() * f);             // [n_ubatch][n_head_kv][head_dim]
  s.v = be.alloc(nu * hp.n_embd_kv() * f);             // [n_ubatch][n_head_kv][head_dim]
  s.att = be.alloc(nu * hp.n_embd_q() * f);            // [n_ubatch][n_head][head_dim]
  s.gate = be.alloc(nu * hp.n_ff * f);                 // [n_ubatch][n_ff]
  s.up = be.alloc(nu * hp.n_ff * f);                   // [n_ubatch][n_ff]
  s.logits_rows = 1;
  s.logits = be.alloc(static_cast<size_t>(hp.n_vocab) * f);  // [1][n_vocab]; grown for mode all
  s.best = be.alloc(nu * sizeof(int32_t));                   // int32 [n_ubatch]
  s.best_lp = be.alloc(nu * f);                              // [n_ubatch]
}

context::context(const model& m, const context_options& opts) : model_(m), opts_(opts) {
  const hparams& hp = m.hp();
  backend& be = m.be();
  if (opts.n_ctx < 1) throw model_error("context: n_ctx must be >= 1");
  if (opts.n_ubatch < 1) throw model_error("context: n_ubatch must be >= 1");
  if (opts.n_ctx > hp.n_ctx_train)
    spdlog::warn("context of {} tokens is longer than the model's training context ({}): quality may drop",
                 opts.n_ctx, hp.n_ctx_train);
  if (opts.blocks) {
    if (&opts.blocks->mdl() != &m) throw model_error("context: the KV block pool belongs to another model");
    blocks_ = opts.blocks;
  } else {
    // Blocks of 16 cells (fewer for a tiny context): n_ctx rounded up to a block.
    const int64_t bc = std::min<int64_t>(kv_blocks::k_default_block_cells,
                                         static_cast<int64_t>(std::bit_ceil(static_cast<uint64_t>(opts.n_ctx))));
    blocks_ = std::make_shared<kv_blocks>(m, (opts.n_ctx + bc - 1) / bc, opts.kv_type, bc);  // checks kv_type
  }

  st_ = std::make_unique<context_state>();
  context_state& s = *st_;
  s.n_ctx = opts.n_ctx;
  s.n_ubatch = std::min(opts.n_ubatch, opts.n_ctx);
  s.kv_type = blocks_->kv_type();
  const size_t max_blocks = static_cast<size_t>((s.n_ctx + blocks_->block_cells() - 1) / blocks_->block_cells());
  s.table = be.alloc(max_blocks * sizeof(int32_t));  // int32 [max_blocks]
  table_.reserve(max_blocks);
  alloc_scratch(be, hp, s);
  pos_host_.resize(static_cast<size_t>(s.n_ubatch));
  graphs_on_ = opts.step_graphs && be.caps().step_graphs;
  be.reserve_attention(s.n_ctx, hp.n_head);
  tokens_.reserve(static_cast<size_t>(s.n_ctx));
}

context::~context() {
  for (int32_t b : table_) blocks_->release(b);
}

int64_t context::n_ctx() const { return st_->n_ctx; }

size_t context::kv_bytes() const {
  if (!opts_.blocks) return blocks_->bytes();  // a private pool
  return blocks_->block_bytes() * table_.size();
}

void context::trim_blocks() {
  const size_t keep = static_cast<size_t>((n_past() + blocks_->block_cells() - 1) / blocks_->block_cells());
  while (table_.size() > keep) {
    blocks_->release(table_.back());
    table_.pop_back();
    table_dirty_ = true;
  }
}

void context::keep_first(int64_t n) {
  if (n < 0) throw std::out_of_range("keep_first: negative count");
  if (n < n_past()) tokens_.resize(static_cast<size_t>(n));
  trim_blocks();
  // Cells past n_past() in a kept block hold stale data that the next eval overwrites.
}

void context::copy_run(const kv_blocks& src_pool, int64_t s_cell, int64_t d_cell, int64_t n) {
  const hparams& hp = model_.hp();
  backend& be = model_.be();
  const size_t row = row_size(blocks_->kv_type(), hp.n_embd_kv()).value_or(0);
  for (int64_t il = 0; il < hp.n_layer; ++il) {
    const size_t l = static_cast<size_t>(il);
    if (&src_pool == blocks_.get()) {
      be.kv_move(*blocks_->k()[l], blocks_->kv_type(), hp.n_embd_kv(), s_cell, d_cell, n);
      be.kv_move(*blocks_->v()[l], blocks_->kv_type(), hp.n_embd_kv(), s_cell, d_cell, n);
    } else {
      be.copy(*blocks_->k()[l], static_cast<size_t>(d_cell) * row, *src_pool.k()[l], static_cast<size_t>(s_cell) * row,
              static_cast<size_t>(n) * row);
      be.copy(*blocks_->v()[l], static_cast<size_t>(d_cell) * row, *src_pool.v()[l], static_cast<size_t>(s_cell) * row,
              static_cast<size_t>(n) * row);
    }
  }
}

void context::copy_cells(const kv_blocks& src_pool, const std::vector<int32_t>& src_table, int64_t src_pos,
                         int64_t dst_pos, int64_t n) {
  const int64_t sbc = src_pool.block_cells(), dbc = blocks_->block_cells();
  for (int64_t i = 0; i < n;) {
    const int64_t sp = src_pos + i, dp = dst_pos + i;
    const int64_t run = std::min({n - i, sbc - sp % sbc, dbc - dp % dbc});
    const int64_t s_cell = int64_t{src_table[static_cast<size_t>(sp / sbc)]} * sbc + sp % sbc;
    const int64_t d_cell = int64_t{table_[static_cast<size_t>(dp / dbc)]} * dbc + dp % dbc;
    copy_run(src_pool, s_cell, d_cell, run);
    i += run;
  }
}

void context::sync_table() {
  if (!table_dirty_) return;
  model_.be().upload(*st_->table, 0, table_.data(), table_.size() * sizeof(int32_t));
  table_dirty_ = false;
}

void context::own_block(size_t i) {
  const int32_t old = table_[i];
  if (blocks_->refs(old) <= 1) return;
  const int32_t fresh = blocks_->take();
  if (fresh < 0) throw model_error("KV cache full: no free block to copy a shared block into");
  const int64_t bc = blocks_->block_cells();
  // The whole block: positions past n_past() in it are stale either way.
  try {
    copy_run(*blocks_, int64_t{old} * bc, int64_t{fresh} * bc, bc);
  } catch (...) {
    blocks_->release(fresh);
    throw;
  }
  table_[i] = fresh;
  blocks_->release(old);
  table_dirty_ = true;
}

void context::reserve_cells(int64_t n) {
  const int64_t bc = blocks_->block_cells();
  // The block that the next position falls into, if it is already there and shared.
  if (n > n_past() && n_past() % bc != 0) own_block(static_cast<size_t>(n_past() / bc));
  const size_t want = static_cast<size_t>((n + bc - 1) / bc);
  const size_t had = table_.size();
  while (table_.size() < want) {
    const int32_t b = blocks_->take();
    if (b < 0) {
      while (table_.size() > had) blocks_->release(table_.back()), table_.pop_back();
      throw model_error("KV cache full: no free block for " + std::to_string(n - n_past()) +
                        " more tokens (the pool holds " + std::to_string(blocks_->n_blocks()) + " blocks of " +
                        std::to_string(bc) + " cells)");
    }
    table_.push_back(b);
    table_dirty_ = true;
  }
  sync_table();
}

forward_segment context::segment(int64_t row0, int64_t n_rows, int64_t pos0, const buffer* pos) const {
  return forward_segment{row0,     n_rows, pos0, &blocks_->k(), &blocks_->v(), pos,
                         kv_table{st_->table.get(), blocks_->block_cells()}, table_};
}

void context::move_range(int64_t src_begin, int64_t src_end, int64_t dst_begin) {
  if (src_begin < 0 || src_end < src_begin || src_end > n_past() || dst_begin < 0 || dst_begin > src_begin)
    throw std::out_of_range("move_range: need 0 <= dst_begin <= src_begin <= src_end <= n_past, got dst " +
                            std::to_string(dst_begin) + ", src [" + std::to_string(src_begin) + ", " +
                            std::to_string(src_end) + "), n_past " + std::to_string(n_past()));
  const int64_t n = src_end - src_begin, delta = dst_begin - src_begin;
  if (delta != 0 && n > 0) {
    const hparams& hp = model_.hp();
    backend& be = model_.be();
    const rope_params rp = rope_params_of(model_);
    const int64_t bc = blocks_->block_cells();
    // The destination blocks become this context's own before they are written.
    for (int64_t b = dst_begin / bc; b <= (dst_begin + n - 1) / bc; ++b) own_block(static_cast<size_t>(b));
    // Left to right, run by run: a run's source positions lie right of every
    // destination written before it, and distinct positions are distinct cells.
    copy_cells(*blocks_, table_, src_begin, dst_begin, n);
    for (int64_t i = 0; i < n;) {
      const int64_t p = dst_begin + i, run = std::min(n - i, bc - p % bc);
      const int64_t cell = int64_t{table_[static_cast<size_t>(p / bc)]} * bc + p % bc;
      for (int64_t il = 0; il < hp.n_layer; ++il)
        be.kv_rope_shift(*blocks_->k()[static_cast<size_t>(il)], blocks_->kv_type(), cell, run, hp.n_head_kv,
                         hp.head_dim, delta, rp);
      i += run;
    }
    be.synchronize();
    std::copy(tokens_.begin() + src_begin, tokens_.begin() + src_end, tokens_.begin() + dst_begin);
  }
  tokens_.resize(static_cast<size_t>(dst_begin + n));
  trim_blocks();
  sync_table();
}

void context::copy_prefix(const context& src, int64_t n) {
  if (&src.model_ != &model_ || src.blocks_->kv_type() != blocks_->kv_type())
    throw model_error("copy_prefix: the source context has another model or KV type");
  if (n < 0 || n > src.n_past() || n > st_->n_ctx)
    throw model_error("copy_prefix: " + std::to_string(n) + " tokens asked, the source holds " +
                      std::to_string(src.n_past()) + " and this context fits " + std::to_string(st_->n_ctx));
  if (&src == this) return keep_first(n);
  int64_t same = 0;
  const int64_t common_max = std::min(n, n_past());
  while (same < common_max && tokens_[static_cast<size_t>(same)] == src.tokens_[static_cast<size_t>(same)]) ++same;
  keep_first(same);
  if (same == n) return;
  const int64_t bc = blocks_->block_cells();
  if (src.blocks_ == blocks_) {
    // One pool: reference src's blocks from the one holding position `same` on.
    const size_t first = static_cast<size_t>(same / bc), last = static_cast<size_t>((n + bc - 1) / bc);
    while (table_.size() > first) blocks_->release(table_.back()), table_.pop_back();
    for (size_t b = first; b < last; ++b) {
      blocks_->retain(src.table_[b]);
      table_.push_back(src.table_[b]);
    }
    table_dirty_ = true;
    tokens_.insert(tokens_.end(), src.tokens_.begin() + same, src.tokens_.begin() + n);
    sync_table();
    return;
  }
  reserve_cells(n);  // own blocks for [same, n)
  copy_cells(*src.blocks_, src.table_, same, same, n - same);
  model_.be().synchronize();
  tokens_.insert(tokens_.end(), src.tokens_.begin() + same, src.tokens_.begin() + n);
}

eval_result context::eval(std::span<const int32_t> toks, logits_mode mode, const cancel_token& cancel,
                          output_kind kind) {
  const hparams& hp = model_.hp();
  context_state& s = *st_;
  const int64_t n_total = static_cast<int64_t>(toks.size());
  check_appendable(toks);

  n_logit_rows_ = 0;
  out_kind_ = kind;
  const int64_t rows = mode == logits_mode::all ? n_total : (mode == logits_mode::last && n_total > 0 ? 1 : 0);
  if (kind == output_kind::logits)
    logits_.resize(static_cast<size_t>(rows * hp.n_vocab));  // capacity is kept between calls
  else {
    argmax_.resize(static_cast<size_t>(rows));
    argmax_lp_.resize(static_cast<size_t>(rows));
  }
  if (mode == logits_mode::all && s.logits_rows < std::min(n_total, s.n_ubatch)) {
    const int64_t rows_new = std::min(n_total, s.n_ubatch);
    buffer_ptr grown = model_.be().alloc(static_cast<size_t>(rows_new * hp.n_vocab) * sizeof(float));
    graphs_.clear();  // they write to the old logits buffer
    s.logits = std::move(grown);
    s.logits_rows = rows_new;  // only once the buffer exists (alloc may throw)
  }

  reserve_cells(n_past() + n_total);  // every block this eval writes, before any work
  eval_result r;
  for (int64_t start = 0; start < n_total; start += s.n_ubatch) {
    if (cancel.is_cancelled()) {
      r.cancelled = true;
      break;
    }
    const int64_t n = std::min(s.n_ubatch, n_total - start);
    const bool last_ub = start + n == n_total;
    const int64_t n_out = mode == logits_mode::all ? n : (mode == logits_mode::last && last_ub ? 1 : 0);
    const int64_t out_row0 = mode == logits_mode::all ? start : 0;
    if (!run_ubatch(toks.subspan(start, n), n_out, out_row0, cancel)) {
      r.cancelled = true;
      break;
    }
    r.n_evaluated += n;
    n_logit_rows_ = mode == logits_mode::all ? start + n : (n_out ? 1 : 0);
    if (opts_.on_ubatch) opts_.on_ubatch(r.n_evaluated, n_total);
  }
  trim_blocks();  // the blocks of a cancelled rest
  return r;
}

void context::check_appendable(std::span<const int32_t> toks) const {
  const int64_t n_total = static_cast<int64_t>(toks.size()), n_vocab = model_.hp().n_vocab;
  if (n_past() + n_total > st_->n_ctx)
    throw model_error("context full: " + std::to_string(n_past()) + " cached + " + std::to_string(n_total) +
                      " new tokens > n_ctx " + std::to_string(st_->n_ctx));
  for (int32_t t : toks)
    if (t < 0 || t >= n_vocab)
      throw model_error("token id " + std::to_string(t) + " out of range [0, " + std::to_string(n_vocab) + ")");
}

bool context::run_ubatch(std::span<const int32_t> toks, int64_t n_out, int64_t out_row0, const cancel_token& cancel) {
  const hparams& hp = model_.hp();
  backend& be = model_.be();
  context_state& s = *st_;
  const int64_t n = static_cast<int64_t>(toks.size());
  const int64_t pos0 = n_past();
  for (int64_t i = 0; i < n; ++i) pos_host_[static_cast<size_t>(i)] = static_cast<int32_t>(pos0 + i);
  be.upload(*s.ids, 0, toks.data(), toks.size_bytes());
  be.upload(*s.pos, 0, pos_host_.data(), static_cast<size_t>(n) * sizeof(int32_t));

  if (!run_forward(n, pos0, n_out, cancel)) return false;  // partial ubatch: not committed

  if (n_out > 0 && out_kind_ == output_kind::argmax) {
    be.download(*s.best, 0, argmax_.data() + out_row0, static_cast<size_t>(n_out) * sizeof(int32_t));
    be.download(*s.best_lp, 0, argmax_lp_.data() + out_row0, static_cast<size_t>(n_out) * sizeof(float));
  } else if (n_out > 0) {
    const size_t row = static_cast<size_t>(hp.n_vocab);
    be.download(*s.logits, 0, logits_.data() + static_cast<size_t>(out_row0) * row, n_out * row * sizeof(float));
  } else {
    be.synchronize();
  }
  tokens_.insert(tokens_.end(), toks.begin(), toks.end());
  return true;
}

bool context::run_forward(int64_t n, int64_t pos0, int64_t n_out, const cancel_token& cancel) {
  backend& be = model_.be();
  context_state& s = *st_;
  const bool best = n_out > 0 && out_kind_ == output_kind::argmax;
  // One sequence: every row is this context's, at positions pos0..pos0+n.
  const forward_segment seg = segment(0, n, pos0, s.pos.get());
  forward_batch b;
  b.n_tokens = n;
  b.pos0 = pos0;
  b.n_out = n_out;
  b.cancel = &cancel;
  b.segments = std::span<const forward_segment>(&seg, 1);
  auto ops = [&](const forward_batch& fb) {
    if (!model_.arch().forward(model_, s, fb)) return false;
    if (best) {
      be.argmax_logprob_rows(*s.logits, n_out, model_.hp().n_vocab, *s.best, *s.best_lp);  // best, best_lp [n_out]
    }
    return true;
  };
  // Run directly, letting long ops (a prefill layer's matmuls, the output
  // projection) stop part-way on cancel; the ubatch is then dropped.
  auto direct = [&] {
    struct clear_interrupt {
      backend& be;
      ~clear_interrupt() { be.set_interrupt(nullptr); }
    } guard{be};
    be.set_interrupt(&cancel);
    return ops(b) && !cancel.is_cancelled();
  };
  if (!graphs_on_ || n > k_graph_tokens) return direct();

  // A step graph per shape; a replay reads this step's ids and positions from s.ids / s.pos.
  const int64_t key = (n * (k_graph_tokens + 1) + n_out) * 2 + (best ? 1 : 0);
  step_graph_ptr& g = graphs_[key];
  if (g && be.replay(*g)) return true;
  if (cancel.is_cancelled()) return false;
  forward_batch rec = b;
  rec.cancel = nullptr;  // a recording must hold every layer
  std::string why = "the backend declined";
  try {
    g = be.capture([&] { ops(rec); });
    if (g && be.replay(*g)) return true;
  } catch (const std::exception& e) {
    why = e.what();  // the direct run below reports a real input error again
  }
  // The backend could not record this step: run steps op by op from now on.
  spdlog::warn("{}: step graphs unavailable ({}), running decode steps op by op", be.name(), why);
  graphs_.clear();
  graphs_on_ = false;
  return direct();
}

int32_t context::argmax(int64_t i) const {
  if (i < 0 || i >= n_logit_rows_) return -1;
  if (out_kind_ == output_kind::argmax) return argmax_[static_cast<size_t>(i)];
  std::span<const float> l = logits(i);
  size_t best = 0;
  for (size_t j = 1; j < l.size(); ++j)
    if (l[j] > l[best]) best = j;
  return static_cast<int32_t>(best);
}

float context::argmax_logprob(int64_t i) const {
  if (i < 0 || i >= n_logit_rows_) return std::numeric_limits<float>::quiet_NaN();
  if (out_kind_ == output_kind::argmax) return argmax_lp_[static_cast<size_t>(i)];
  return top_logprob(logits(i));
}

std::span<const float> context::logits(int64_t i) const {
  if (i < 0 || i >= n_logit_rows_ || out_kind_ != output_kind::logits) return {};
  const size_t row = static_cast<size_t>(model_.hp().n_vocab);
  return std::span<const float>(logits_.data() + static_cast<size_t>(i) * row, row);
}

}  // namespace qf::infer
