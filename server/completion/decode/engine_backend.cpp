// Adapter from the engine's model/context/tokenizer to the pipeline's lm_*
// interfaces (see lm.h for why the pipeline has its own interfaces).
#include "server/completion/decode/engine_backend.h"

#include <new>
#include <optional>

#include <spdlog/spdlog.h>

#include "inference/backend/backend.h"
#include "inference/gguf/gguf.h"
#include "inference/model/batch.h"
#include "inference/model/context.h"
#include "inference/model/kv_blocks.h"
#include "inference/model/device_check.h"
#include "inference/model/model.h"
#include "inference/tokenizer/tokenizer.h"
#include "server/completion/decode/device_verdicts.h"

namespace qf::server::completion {
namespace {

class engine_vocab final : public lm_vocab {
 public:
  explicit engine_vocab(const infer::tokenizer& t) : t_(t) {
    const infer::special_tokens& s = t.special();
    sp_ = lm_specials{s.bos, s.eos, s.eot, s.pad, s.fim_pre, s.fim_suf, s.fim_mid, s.fim_pad, s.fim_rep, s.fim_sep};
  }
  std::vector<int32_t> encode(std::string_view text) const override { return t_.encode(text, false, false); }
  const std::string& piece(int32_t id) const override { return t_.piece(id); }
  bool is_control(int32_t id) const override { return t_.is_control(id) || t_.is_eog(id); }
  int32_t n_vocab() const override { return t_.n_vocab(); }
  const lm_specials& specials() const override { return sp_; }
  bool add_bos() const override { return t_.add_bos_default(); }
  int32_t find_token(std::string_view text) const override { return t_.find(text); }

 private:
  const infer::tokenizer& t_;
  lm_specials sp_;
};

infer::logits_mode to_engine(lm_logits m) {
  switch (m) {
    case lm_logits::none: return infer::logits_mode::none;
    case lm_logits::last: return infer::logits_mode::last;
    case lm_logits::all: return infer::logits_mode::all;
  }
  return infer::logits_mode::last;
}

// Blocks a slot's pool keeps beside its n_ctx cells for the forks of its
// prompt (candidates 2..n: each needs a copy of the prompt's partly filled
// last block and blocks for its own tokens), and the slot's own copy of that
// block once forks share it. 24 blocks of 16 cells: two forks of up to about
// 160 tokens each.
constexpr int64_t k_fork_blocks = 24;

class engine_sequence final : public lm_sequence {
 public:
  // A sequence with a pool of its own: n_ctx cells and room for forks.
  engine_sequence(const infer::model& m, int64_t n_ctx, bool step_graphs)
      : pool_(std::make_shared<infer::kv_blocks>(m, blocks_for(n_ctx) + k_fork_blocks, infer::ggml_type::f16,
                                                 infer::kv_blocks::k_default_block_cells)),
        ctx_(m, make_opts(n_ctx, step_graphs, pool_, 512)),
        owns_pool_(true) {}
  // A fork in `pool`: it evaluates only in batches, so its own scratch is small.
  engine_sequence(const infer::model& m, int64_t n_ctx, bool step_graphs, std::shared_ptr<infer::kv_blocks> pool)
      : pool_(std::move(pool)), ctx_(m, make_opts(n_ctx, step_graphs, pool_, 16)), owns_pool_(false) {}
  int64_t n_ctx() const override { return ctx_.n_ctx(); }
  const std::vector<int32_t>& tokens() const override { return ctx_.tokens(); }
  void keep_first(int64_t n) override { ctx_.keep_first(n); }
  void move_range(int64_t b, int64_t e, int64_t d) override { ctx_.move_range(b, e, d); }
  lm_eval_result eval(std::span<const int32_t> toks, lm_logits mode, const cancel_token& cancel,
                      lm_output out) override {
    const infer::output_kind kind = out == lm_output::full ? infer::output_kind::logits : infer::output_kind::argmax;
    infer::eval_result r = ctx_.eval(toks, to_engine(mode), cancel, kind);
    return lm_eval_result{r.n_evaluated, r.cancelled};
  }
  int32_t best_token(int64_t i) const override { return ctx_.argmax(i); }
  float best_logprob(int64_t i) const override { return ctx_.argmax_logprob(i); }
  std::span<const float> logits(int64_t i) const override { return ctx_.logits(i); }
  // The pool a slot owns; nothing for a fork (its cells are the slot's).
  size_t kv_bytes() const override { return owns_pool_ ? pool_->bytes() : 0; }
  void copy_prefix(const lm_sequence& src, int64_t n) override {
    if (const auto* e = dynamic_cast<const engine_sequence*>(&src)) return ctx_.copy_prefix(e->ctx_, n);
    lm_sequence::copy_prefix(src, n);
  }
  infer::context& ctx() { return ctx_; }
  const std::shared_ptr<infer::kv_blocks>& pool() const { return pool_; }
  bool owns_pool() const { return owns_pool_; }
  static int64_t blocks_for(int64_t n_ctx) {
    const int64_t bc = infer::kv_blocks::k_default_block_cells;
    return (n_ctx + bc - 1) / bc;
  }

 private:
  static infer::context_options make_opts(int64_t n_ctx, bool step_graphs, std::shared_ptr<infer::kv_blocks> pool,
                                          int64_t n_ubatch) {
    infer::context_options o;
    o.n_ctx = n_ctx;
    o.step_graphs = step_graphs;
    o.blocks = std::move(pool);
    o.n_ubatch = n_ubatch;
    return o;
  }
  std::shared_ptr<infer::kv_blocks> pool_;  // before ctx_: the context releases its blocks into it
  infer::context ctx_;
  bool owns_pool_;
};

class engine_backend final : public lm_backend {
 public:
  engine_backend(std::unique_ptr<infer::model> m, bool step_graphs)
      : m_(std::move(m)), vocab_(m_->vocab()), step_graphs_(step_graphs) {}
  const lm_vocab& vocab() const override { return vocab_; }
  std::unique_ptr<lm_sequence> new_sequence(int64_t n_ctx) override {
    return std::make_unique<engine_sequence>(*m_, n_ctx, step_graphs_);
  }
  size_t kv_bytes_per_token() const override {
    const infer::hparams& hp = m_->hp();
    return static_cast<size_t>(hp.n_layer) * 2 * static_cast<size_t>(hp.n_embd_kv()) * 2;  // K and V, F16
  }
  size_t sequence_bytes(int64_t n_ctx) const override {
    const int64_t cells = (engine_sequence::blocks_for(n_ctx) + k_fork_blocks) * infer::kv_blocks::k_default_block_cells;
    return kv_bytes_per_token() * static_cast<size_t>(cells);
  }
  std::vector<std::unique_ptr<lm_sequence>> fork(lm_sequence& parent, int64_t n, int count, int64_t more) override {
    auto* p = dynamic_cast<engine_sequence*>(&parent);
    if (!p || !p->owns_pool() || count <= 0) return {};
    // Each fork: a copy of the shared partly filled block and its own tokens; the parent: its copy of that block.
    const int64_t bc = infer::kv_blocks::k_default_block_cells;
    const int64_t need = count * ((more + bc - 1) / bc + 2) + 1;
    if (p->pool()->n_free() < need) return {};
    std::vector<std::unique_ptr<lm_sequence>> out;
    for (int i = 0; i < count; ++i) {
      auto f = std::make_unique<engine_sequence>(*m_, p->n_ctx(), step_graphs_, p->pool());
      f->ctx().copy_prefix(p->ctx(), n);  // by reference: one pool
      out.push_back(std::move(f));
    }
    return out;
  }
  int64_t n_ctx_train() const override { return m_->hp().n_ctx_train; }
  std::string describe() const override { return m_->describe(); }
  void eval_batch(std::span<lm_batch_entry> entries, lm_output out) override {
    std::vector<infer::batch_entry> es;
    es.reserve(entries.size());
    for (lm_batch_entry& e : entries) {
      auto* seq = dynamic_cast<engine_sequence*>(e.seq);
      if (!seq) return lm_backend::eval_batch(entries, out);  // not this engine's: one by one
      infer::batch_entry be;
      be.ctx = &seq->ctx();
      be.tokens = e.toks;
      be.mode = to_engine(e.mode);
      be.cancel = e.cancel;
      es.push_back(std::move(be));
    }
    if (!batch_) batch_ = std::make_unique<infer::batch>(*m_, k_batch_rows);
    batch_->eval(es, out == lm_output::full ? infer::output_kind::logits : infer::output_kind::argmax);
    for (size_t i = 0; i < entries.size(); ++i) entries[i].result = {es[i].result.n_evaluated, es[i].result.cancelled};
  }

 private:
  // Rows of one batched pass: 8 sequences each verifying 1 + 7 drafted tokens.
  static constexpr int64_t k_batch_rows = 64;
  std::unique_ptr<infer::model> m_;
  std::unique_ptr<infer::batch> batch_;  // scratch of the batched passes, made on first use
  engine_vocab vocab_;
  bool step_graphs_;
};

}  // namespace

std::unique_ptr<lm_vocab> make_engine_vocab(const infer::tokenizer& t) { return std::make_unique<engine_vocab>(t); }

std::unique_ptr<lm_backend> make_engine_backend(std::unique_ptr<infer::model> m, bool step_graphs) {
  return std::make_unique<engine_backend>(std::move(m), step_graphs);
}

std::unique_ptr<lm_backend> load_engine_backend(const std::string& path, const engine_options& engine,
                                                std::string* error, const device_check_policy& checks) {
  auto fail = [&](const std::string& msg) -> std::unique_ptr<lm_backend> {
    if (error) *error = msg;
    return nullptr;
  };
  try {
    infer::model_options o;
    o.n_threads = engine.threads;
    o.device = engine.device;
    std::unique_ptr<infer::model> m =
        checks.make_backend ? infer::model::load(path, checks.make_backend(engine)) : infer::model::load(path, o);
    if (m->be().name() != "cpu") {
      const std::string device = m->be().describe();
      const std::string file =
          checks.verdicts_file == "default" ? default_device_verdicts_file() : checks.verdicts_file;
      const std::string key = device_check_key(device, path);
      std::optional<device_verdict> v = file.empty() ? std::nullopt : find_device_verdict(file, key);
      if (!v) {
        spdlog::info("device self-check of {} on {}", path, device);
        infer::device_check_options co;
        co.n_threads = engine.threads;
        const infer::device_check_report r = infer::check_against_cpu(*m, path, co);
        v = device_verdict{r.passed, r.failure, r.worst_nmse, device, path, {}};
        std::string err;
        // An out-of-memory may pass (another process held the device): not kept, so checked again.
        const bool keep = r.passed || r.failure.rfind("out of memory", 0) != 0;
        if (keep && !file.empty() && !record_device_verdict(file, key, *v, &err))
          spdlog::warn("device self-check: the verdict is not kept ({}); the check runs again next time", err);
        if (r.positions > 0)
          spdlog::info("device self-check: {} (worst normalized squared error {:.3g} over {} positions)",
                       r.passed ? "passed" : "FAILED: " + r.failure, r.worst_nmse, r.positions);
        else
          spdlog::info("device self-check: FAILED: {}", r.failure);
      }
      if (!v->passed) {
        const std::string msg = "quickfill: the GPU self-check failed on " + device + ": " + v->failure +
                                ". Completions run on the CPU instead (`quickfill doctor` shows the check).";
        spdlog::warn("{}", msg);
        if (checks.notice) checks.notice(msg);
        m.reset();  // the device's memory goes before the CPU copy is made
        o.device = "cpu";
        m = infer::model::load(path, o);
      }
    }
    return make_engine_backend(std::move(m), engine.step_graphs);
  } catch (const infer::gguf::gguf_error& e) {
    return fail(std::string("cannot read the model file: ") + e.what());
  } catch (const infer::model_error& e) {
    return fail(std::string("cannot load the model: ") + e.what());
  } catch (const std::bad_alloc&) {
    return fail("out of memory while loading the model " + path);
  } catch (const std::exception& e) {
    return fail("cannot load the model " + path + ": " + e.what());
  }
}

}  // namespace qf::server::completion
