// batch (see batch.h): plans passes over the entries, lays each pass out as
// [rows without outputs][output rows], runs the architecture's forward pass
// once per pass and commits each entry's rows to its context.
#include "inference/model/batch.h"

#include <algorithm>
#include <numeric>
#include <string>

#include "inference/backend/backend.h"
#include "inference/model/architecture.h"
#include "inference/model/context_state.h"

namespace qf::infer {

namespace {

// One entry's part of a pass: tokens [first, first + n) of the entry, the
// last n_out of them output rows.
struct chunk {
  size_t entry = 0;
  int64_t first = 0, n = 0, n_out = 0;
  int64_t head_row = 0, tail_row = 0;  // where its rows sit in the pass
};

}  // namespace

batch::batch(const model& m, int64_t max_rows) : model_(m) {
  if (max_rows < 1) throw model_error("batch: max_rows must be >= 1");
  st_ = std::make_unique<context_state>();
  st_->n_ubatch = max_rows;
  alloc_scratch(m.be(), m.hp(), *st_);
  ids_host_.resize(static_cast<size_t>(max_rows));
  pos_host_.resize(static_cast<size_t>(max_rows));
}

batch::~batch() = default;

int64_t batch::max_rows() const { return st_->n_ubatch; }

void batch::eval(std::span<batch_entry> entries, output_kind kind, const cancel_token& cancel) {
  const hparams& hp = model_.hp();
  backend& be = model_.be();
  context_state& s = *st_;
  const int64_t V = hp.n_vocab;

  // Everything is checked before anything runs.
  for (size_t i = 0; i < entries.size(); ++i) {
    const batch_entry& e = entries[i];
    if (!e.ctx) throw model_error("batch: entry " + std::to_string(i) + " has no context");
    if (&e.ctx->mdl() != &model_) throw model_error("batch: entry " + std::to_string(i) + " is another model's");
    if (e.ctx->st_->kv_type != entries[0].ctx->st_->kv_type)
      throw model_error("batch: the entries' KV caches must have one type");
    for (size_t j = 0; j < i; ++j)
      if (entries[j].ctx == e.ctx) throw model_error("batch: a context appears twice");
    e.ctx->check_appendable(e.tokens);
  }
  if (entries.empty()) return;
  s.kv_type = entries[0].ctx->st_->kv_type;

  std::vector<int64_t> done(entries.size(), 0);
  std::vector<bool> active(entries.size());
  for (size_t i = 0; i < entries.size(); ++i) {
    batch_entry& e = entries[i];
    context& c = *e.ctx;
    const int64_t n = static_cast<int64_t>(e.tokens.size());
    const int64_t rows = e.mode == logits_mode::all ? n : (e.mode == logits_mode::last && n > 0 ? 1 : 0);
    c.out_kind_ = kind;
    c.n_logit_rows_ = 0;
    if (kind == output_kind::logits) {
      c.logits_.resize(static_cast<size_t>(rows * V));
    } else {
      c.argmax_.resize(static_cast<size_t>(rows));
      c.argmax_lp_.resize(static_cast<size_t>(rows));
    }
    e.result = {};
    active[i] = n > 0;
  }

  // Whatever happens, no context keeps blocks past its committed tokens.
  struct trim_all {
    std::span<batch_entry> es;
    ~trim_all() {
      for (batch_entry& e : es) e.ctx->trim_blocks();
    }
  } trim{entries};
  std::vector<chunk> chunks;
  std::vector<forward_segment> segs;
  std::vector<size_t> order(entries.size());
  for (;;) {
    // Entries cancelled since the last pass leave now.
    for (size_t i = 0; i < entries.size(); ++i)
      if (active[i] && entries[i].cancel.is_cancelled()) {
        entries[i].result.cancelled = true;
        active[i] = false;
      }
    if (std::none_of(active.begin(), active.end(), [](bool a) { return a; })) return;
    if (cancel.is_cancelled()) {
      for (size_t i = 0; i < entries.size(); ++i)
        if (active[i]) entries[i].result.cancelled = true;
      return;
    }

    // Rows for this pass: the entries needing fewest rows are served whole
    // first, the rest share what is left evenly (a long prefill cannot
    // crowd out the others' decode tokens).
    chunks.clear();
    std::iota(order.begin(), order.end(), size_t{0});
    auto remaining = [&](size_t i) { return static_cast<int64_t>(entries[i].tokens.size()) - done[i]; };
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return remaining(a) < remaining(b); });
    std::vector<int64_t> take(entries.size(), 0);
    int64_t left = max_rows();
    size_t waiting = static_cast<size_t>(std::count(active.begin(), active.end(), true));
    for (size_t i : order) {
      if (!active[i]) continue;
      take[i] = std::min(remaining(i), left / static_cast<int64_t>(waiting));
      left -= take[i];
      --waiting;
    }
    int64_t tail = 0;  // output rows
    for (size_t i = 0; i < entries.size(); ++i) {
      if (take[i] == 0) continue;
      const batch_entry& e = entries[i];
      chunk c{i, done[i], take[i], 0, 0, 0};
      const bool ends = done[i] + take[i] == static_cast<int64_t>(e.tokens.size());
      c.n_out = e.mode == logits_mode::all ? c.n : (e.mode == logits_mode::last && ends ? 1 : 0);
      tail += c.n_out;
      chunks.push_back(c);
    }
    // Every block the chunks write, before any work (a full pool throws here).
    for (const chunk& c : chunks) entries[c.entry].ctx->reserve_cells(entries[c.entry].ctx->n_past() + c.n);
    // Rows: every chunk's rows without outputs, then every chunk's output rows.
    segs.clear();
    int64_t row = 0;
    for (chunk& c : chunks) c.head_row = row, row += c.n - c.n_out;
    for (chunk& c : chunks) c.tail_row = row, row += c.n_out;
    const int64_t n_rows = row;
    auto add_segment = [&](const chunk& c, int64_t row0, int64_t tok0, int64_t n) {
      if (n == 0) return;
      context& ctx = *entries[c.entry].ctx;
      const int64_t pos0 = ctx.n_past() + tok0;
      for (int64_t r = 0; r < n; ++r) {
        ids_host_[static_cast<size_t>(row0 + r)] = entries[c.entry].tokens[static_cast<size_t>(c.first + tok0 + r)];
        pos_host_[static_cast<size_t>(row0 + r)] = static_cast<int32_t>(pos0 + r);
      }
      if (seg_pos_.size() <= segs.size()) seg_pos_.push_back(be.alloc(static_cast<size_t>(max_rows()) * sizeof(int32_t)));
      buffer& sp = *seg_pos_[segs.size()];
      be.upload(sp, 0, pos_host_.data() + row0, static_cast<size_t>(n) * sizeof(int32_t));
      segs.push_back(ctx.segment(row0, n, pos0, &sp));
    };
    for (const chunk& c : chunks) add_segment(c, c.head_row, 0, c.n - c.n_out);
    for (const chunk& c : chunks) add_segment(c, c.tail_row, c.n - c.n_out, c.n_out);
    be.upload(*s.ids, 0, ids_host_.data(), static_cast<size_t>(n_rows) * sizeof(int32_t));
    be.upload(*s.pos, 0, pos_host_.data(), static_cast<size_t>(n_rows) * sizeof(int32_t));
    if (s.logits_rows < tail) {  // the forward pass writes logits rows for either kind
      s.logits = be.alloc(static_cast<size_t>(tail * V) * sizeof(float));
      s.logits_rows = tail;
    }

    forward_batch b;
    b.n_tokens = n_rows;
    b.pos0 = segs.front().pos0;
    b.n_out = tail;
    b.cancel = &cancel;
    b.segments = segs;
    bool ran = false;
    {
      struct clear_interrupt {
        backend& be;
        ~clear_interrupt() { be.set_interrupt(nullptr); }
      } guard{be};
      be.set_interrupt(&cancel);
      ran = model_.arch().forward(model_, s, b);
      if (ran && kind == output_kind::argmax && tail > 0)
        be.argmax_logprob_rows(*s.logits, tail, V, *s.best, *s.best_lp);  // best, best_lp [tail]
    }
    ++n_passes_;
    if (!ran || cancel.is_cancelled()) {
      be.synchronize();
      for (size_t i = 0; i < entries.size(); ++i)
        if (active[i]) entries[i].result.cancelled = true;
      return;
    }

    // Commit each chunk whose entry is still wanted.
    bool copied = false;
    for (const chunk& c : chunks) {
      batch_entry& e = entries[c.entry];
      context& ctx = *e.ctx;
      if (e.cancel.is_cancelled()) {
        e.result.cancelled = true;
        active[c.entry] = false;
        continue;
      }
      if (c.n_out > 0) {
        const int64_t out_row = e.mode == logits_mode::all ? c.first : 0;
        const int64_t out0 = c.tail_row - (n_rows - tail);  // its first row among the output rows
        if (kind == output_kind::argmax) {
          be.download(*s.best, static_cast<size_t>(out0) * sizeof(int32_t), ctx.argmax_.data() + out_row,
                      static_cast<size_t>(c.n_out) * sizeof(int32_t));
          be.download(*s.best_lp, static_cast<size_t>(out0) * sizeof(float), ctx.argmax_lp_.data() + out_row,
                      static_cast<size_t>(c.n_out) * sizeof(float));
        } else {
          const size_t row_bytes = static_cast<size_t>(V) * sizeof(float);
          be.download(*s.logits, static_cast<size_t>(out0) * row_bytes,
                      ctx.logits_.data() + static_cast<size_t>(out_row * V), static_cast<size_t>(c.n_out) * row_bytes);
        }
        copied = true;
      }
      const auto toks = e.tokens.subspan(static_cast<size_t>(c.first), static_cast<size_t>(c.n));
      ctx.tokens_.insert(ctx.tokens_.end(), toks.begin(), toks.end());
      done[c.entry] += c.n;
      e.result.n_evaluated += c.n;
      const int64_t total = static_cast<int64_t>(e.tokens.size());
      ctx.n_logit_rows_ = e.mode == logits_mode::all ? done[c.entry] : (c.n_out > 0 ? 1 : 0);
      if (done[c.entry] == total) active[c.entry] = false;
      if (ctx.opts_.on_ubatch) ctx.opts_.on_ubatch(done[c.entry], total);
    }
    if (!copied) be.synchronize();
  }
}

}  // namespace qf::infer
