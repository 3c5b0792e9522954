// The context's step-graph protocol, checked on the CPU. `replaying_backend`
// wraps the CPU backend and behaves as CUDA graphs do: capture() only records
// the ops with the arguments they were called with, and replay() runs them
// again with exactly those arguments. A forward pass that passed anything
// step-dependent as a host value (a position, a cache cell) instead of
// through a buffer would therefore replay the wrong step, and its logits
// would differ from a direct run's.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include <functional>
#include <memory>
#include <vector>

#include "inference/backend/backend.h"
#include "inference/model/context.h"
#include "inference/sampling/sampler.h"
#include "tests/inference/model/model_test_util.h"

namespace qf::test {
namespace {

using namespace qf::infer;

class replaying_backend final : public backend {
 public:
  explicit replaying_backend(std::unique_ptr<backend> inner) : in_(std::move(inner)) {}

  int captures = 0, replays = 0;
  bool refuse = false;               // capture() declines
  void invalidate() { ++generation_; }  // as if graph-visible scratch moved

  std::string name() const override { return in_->name(); }
  std::string describe() const override { return "replaying " + in_->describe(); }
  backend_caps caps() const override {
    backend_caps c = in_->caps();
    c.step_graphs = true;
    return c;
  }
  bool supports_weight_type(ggml_type t) const override { return in_->supports_weight_type(t); }
  weight_ptr upload_weight(ggml_type type, int64_t rows, int64_t cols, const uint8_t* data) override {
    return in_->upload_weight(type, rows, cols, data);
  }
  buffer_ptr alloc(size_t bytes) override { return in_->alloc(bytes); }
  void upload(buffer& dst, size_t off, const void* src, size_t bytes) override {
    no_recording("upload");
    in_->upload(dst, off, src, bytes);
  }
  void download(const buffer& src, size_t off, void* dst, size_t bytes) override {
    no_recording("download");
    in_->download(src, off, dst, bytes);
  }
  void synchronize() override {
    no_recording("synchronize");
    in_->synchronize();
  }
  void reserve_attention(int64_t n_ctx, int64_t n_head) override { in_->reserve_attention(n_ctx, n_head); }
  void set_interrupt(const cancel_token* t) override {
    if (recording_ && t) ADD_FAILURE() << "interrupt set while recording a step";
    in_->set_interrupt(t);
  }

  void get_rows(const weight& t, const buffer& ids, int64_t n, f32_ref out) override {
    op([=, this, &t, &ids] { in_->get_rows(t, ids, n, out); });
  }
  void matmul(const weight& w, f32_ref x, int64_t n, f32_ref y) override {
    op([=, this, &w] { in_->matmul(w, x, n, y); });
  }
  void argmax_rows(f32_ref x, int64_t n_rows, int64_t n_cols, buffer& out) override {
    op([=, this, &out] { in_->argmax_rows(x, n_rows, n_cols, out); });
  }
  void top_logprob_rows(f32_ref x, int64_t n_rows, int64_t n_cols, f32_ref out) override {
    op([=, this] { in_->top_logprob_rows(x, n_rows, n_cols, out); });
  }
  void rms_norm(f32_ref x, const buffer& w, f32_ref y, int64_t n_rows, int64_t n_cols, float eps) override {
    op([=, this, &w] { in_->rms_norm(x, w, y, n_rows, n_cols, eps); });
  }
  void add_bias(f32_ref x, const buffer& b, int64_t n_rows, int64_t n_cols) override {
    op([=, this, &b] { in_->add_bias(x, b, n_rows, n_cols); });
  }
  void add(f32_ref a, f32_ref b, f32_ref out, int64_t n) override { op([=, this] { in_->add(a, b, out, n); }); }
  void swiglu(f32_ref g, f32_ref u, f32_ref out, int64_t n) override { op([=, this] { in_->swiglu(g, u, out, n); }); }
  void layer_norm(f32_ref x, const buffer& w, const buffer* b, f32_ref y, int64_t n_rows, int64_t n_cols,
                  float eps) override {
    op([=, this, &w] { in_->layer_norm(x, w, b, y, n_rows, n_cols, eps); });
  }
  void gelu(f32_ref x, f32_ref out, int64_t n) override { op([=, this] { in_->gelu(x, out, n); }); }
  void geglu(f32_ref g, f32_ref u, f32_ref out, int64_t n) override { op([=, this] { in_->geglu(g, u, out, n); }); }
  void scale(f32_ref x, float s, int64_t n) override { op([=, this] { in_->scale(x, s, n); }); }
  void rope(f32_ref x, const buffer& pos, int64_t n_tokens, int64_t n_heads, int64_t head_dim,
            const rope_params& rp) override {
    op([=, this, &pos] { in_->rope(x, pos, n_tokens, n_heads, head_dim, rp); });
  }
  void kv_store(f32_ref src, int64_t n_rows, int64_t row_len, buffer& cache, ggml_type kv_type,
                const buffer& pos, const kv_table& table) override {
    op([=, this, &cache, &pos] { in_->kv_store(src, n_rows, row_len, cache, kv_type, pos, table); });
  }
  void attention(f32_ref q, const buffer& k, const buffer& v, f32_ref out, const attention_params& ap) override {
    op([=, this, &k, &v] { in_->attention(q, k, v, out, ap); });
  }
  void kv_move(buffer& cache, ggml_type kv_type, int64_t row_len, int64_t src, int64_t dst, int64_t n) override {
    no_recording("kv_move");
    in_->kv_move(cache, kv_type, row_len, src, dst, n);
  }
  void kv_rope_shift(buffer& k, ggml_type kv_type, int64_t first, int64_t n, int64_t n_head_kv, int64_t head_dim,
                     int64_t delta, const rope_params& rp) override {
    no_recording("kv_rope_shift");
    in_->kv_rope_shift(k, kv_type, first, n, n_head_kv, head_dim, delta, rp);
  }

  step_graph_ptr capture(const std::function<void()>& record) override {
    if (refuse) return nullptr;
    recording_ = true;
    rec_.clear();
    record();
    recording_ = false;
    ++captures;
    return std::make_unique<graph>(std::move(rec_), generation_);
  }
  bool replay(step_graph& g) override {
    auto& rg = static_cast<graph&>(g);
    if (rg.generation != generation_) return false;
    ++replays;
    for (auto& f : rg.ops) f();
    return true;
  }

 private:
  struct graph final : step_graph {
    graph(std::vector<std::function<void()>> o, int gen) : ops(std::move(o)), generation(gen) {}
    std::vector<std::function<void()>> ops;
    int generation;
  };
  template <class F>
  void op(F f) {
    if (recording_)
      rec_.emplace_back(std::move(f));
    else
      f();
  }
  void no_recording(const char* what) const {
    if (recording_) ADD_FAILURE() << what << " called while recording a step";
  }

  std::unique_ptr<backend> in_;
  bool recording_ = false;
  std::vector<std::function<void()>> rec_;
  int generation_ = 0;
};

struct fixture {
  synth_model sm;
  replaying_backend* be = nullptr;  // owned by the model
  std::unique_ptr<model> m;
};

fixture load(const std::string& arch) {
  fixture f;
  synth_config c;
  c.arch = arch;
  c.tied = arch == "qwen2";
  f.sm = make_synth(c);
  const std::string path = temp_path("step_graphs_" + arch + ".gguf");
  write_gguf(f.sm, path);
  auto be = std::make_unique<replaying_backend>(make_cpu_backend(2));
  f.be = be.get();
  f.m = model::load(path, std::move(be));
  return f;
}

// Longer than any step graph: prompts run directly.
constexpr int64_t k_prompt = context::k_graph_tokens + 4;

context_options opts(bool graphs) {
  context_options o;
  o.n_ctx = 128;
  o.n_ubatch = 64;
  o.step_graphs = graphs;
  return o;
}

// One decode step on both contexts; the logits must agree.
void step_both(context& g, context& d, int32_t tok, const std::string& where) {
  const int32_t t[1] = {tok};
  g.eval(t, logits_mode::last);
  d.eval(t, logits_mode::last);
  ASSERT_EQ(g.n_logits_rows(), 1);
  EXPECT_LT(rel_diff(g.logits(0), d.logits(0)), 1e-6) << where;
}

class step_graphs : public ::testing::TestWithParam<std::string> {};

TEST_P(step_graphs, replayed_decode_equals_direct_decode) {
  fixture f = load(GetParam());
  context g(*f.m, opts(true)), d(*f.m, opts(false));
  ASSERT_TRUE(g.step_graphs_active());
  ASSERT_FALSE(d.step_graphs_active());
  const auto prompt = some_tokens(k_prompt, f.sm.n_vocab, 3);  // run directly
  g.eval(prompt, logits_mode::last);
  d.eval(prompt, logits_mode::last);
  EXPECT_EQ(f.be->captures, 0);
  int32_t tok = d.argmax(0);
  for (int i = 0; i < 20; ++i) {
    step_both(g, d, tok, "step " + std::to_string(i));
    tok = d.argmax(0);
  }
  EXPECT_EQ(f.be->captures, 1);  // one shape: 1 token, 1 output row
  EXPECT_EQ(f.be->replays, 20);
  EXPECT_EQ(g.n_step_graphs(), 1u);

  // Rewind: the same recording now runs at earlier positions.
  g.keep_first(k_prompt + 3);
  d.keep_first(k_prompt + 3);
  for (int i = 0; i < 5; ++i) step_both(g, d, (tok + 7 * i) % int32_t(f.sm.n_vocab), "after rewind " + std::to_string(i));
  EXPECT_EQ(f.be->captures, 1);
  EXPECT_EQ(g.tokens(), d.tokens());
}

TEST_P(step_graphs, verification_batches_and_argmax_output) {
  fixture f = load(GetParam());
  context g(*f.m, opts(true)), d(*f.m, opts(false));
  const auto prompt = some_tokens(k_prompt, f.sm.n_vocab, 5);
  g.eval(prompt, logits_mode::last, {}, output_kind::argmax);
  d.eval(prompt, logits_mode::last);
  EXPECT_EQ(g.argmax(0), d.argmax(0));
  EXPECT_TRUE(g.logits(0).empty());  // only the ids came back
  for (int round = 0; round < 4; ++round) {
    // A draft of 3 tokens verified in one step (mode all), then a rejected tail dropped.
    const auto batch = some_tokens(3, f.sm.n_vocab, 11 + round);
    const int64_t base = g.n_past();
    g.eval(batch, logits_mode::all, {}, output_kind::argmax);
    d.eval(batch, logits_mode::all);
    for (int64_t i = 0; i < 3; ++i) EXPECT_EQ(g.argmax(i), d.argmax(i)) << "round " << round << " row " << i;
    g.keep_first(base + 1);
    d.keep_first(base + 1);
    const int32_t t[1] = {d.argmax(0)};
    g.eval(t, logits_mode::last, {}, output_kind::argmax);
    d.eval(t, logits_mode::last);
    EXPECT_EQ(g.argmax(0), d.argmax(0)) << "round " << round;
  }
  // Shapes: 3 tokens x 3 rows, 1 token x 1 row (argmax output); later rounds replay them.
  EXPECT_EQ(g.n_step_graphs(), 2u);
  EXPECT_EQ(f.be->captures, 2);
  EXPECT_EQ(f.be->replays, 8);
}

TEST_P(step_graphs, stale_graphs_are_recorded_again) {
  fixture f = load(GetParam());
  context g(*f.m, opts(true)), d(*f.m, opts(false));
  const auto prompt = some_tokens(k_prompt, f.sm.n_vocab, 9);
  g.eval(prompt, logits_mode::last);
  d.eval(prompt, logits_mode::last);
  step_both(g, d, 5, "first");
  f.be->invalidate();
  step_both(g, d, 6, "after invalidation");
  EXPECT_EQ(f.be->captures, 2);
  EXPECT_EQ(f.be->replays, 2);
}

TEST_P(step_graphs, a_backend_that_cannot_record_runs_steps_directly) {
  fixture f = load(GetParam());
  f.be->refuse = true;
  context g(*f.m, opts(true)), d(*f.m, opts(false));
  const auto prompt = some_tokens(k_prompt, f.sm.n_vocab, 4);
  g.eval(prompt, logits_mode::last);
  d.eval(prompt, logits_mode::last);
  step_both(g, d, 9, "first step");
  EXPECT_FALSE(g.step_graphs_active());
  step_both(g, d, 10, "second step");
  EXPECT_EQ(f.be->replays, 0);
}

TEST_P(step_graphs, argmax_rows_match_the_host_argmax) {
  fixture f = load(GetParam());
  context d(*f.m, opts(false));
  const auto prompt = some_tokens(9, f.sm.n_vocab, 21);
  d.eval(prompt, logits_mode::all);
  std::vector<int32_t> host;
  for (int64_t i = 0; i < 9; ++i) host.push_back(d.argmax(i));
  d.clear();
  d.eval(prompt, logits_mode::all, {}, output_kind::argmax);
  for (int64_t i = 0; i < 9; ++i) EXPECT_EQ(d.argmax(i), host[size_t(i)]) << i;
  EXPECT_EQ(d.argmax(9), -1);
  EXPECT_EQ(d.argmax(-1), -1);
}

TEST_P(step_graphs, argmax_logprobs_match_the_host_log_softmax) {
  fixture f = load(GetParam());
  context d(*f.m, opts(false));
  const auto prompt = some_tokens(9, f.sm.n_vocab, 22);
  d.eval(prompt, logits_mode::all);
  std::vector<float> host;
  for (int64_t i = 0; i < 9; ++i) {
    const std::span<const float> row = d.logits(i);
    // log softmax at the argmax, in double, written out here.
    const float m = *std::max_element(row.begin(), row.end());
    double sum = 0;
    for (float x : row) sum += std::exp(double(x) - m);
    host.push_back(static_cast<float>(-std::log(sum)));
    EXPECT_LT(host.back(), 0.0f);
    EXPECT_NEAR(d.argmax_logprob(i), host.back(), 1e-5) << "logits kind, row " << i;
    EXPECT_NEAR(token_logprob(row, d.argmax(i)), host.back(), 1e-5) << i;
  }
  d.clear();
  d.eval(prompt, logits_mode::all, {}, output_kind::argmax);
  for (int64_t i = 0; i < 9; ++i) EXPECT_NEAR(d.argmax_logprob(i), host[size_t(i)], 1e-4) << "argmax kind, row " << i;
  EXPECT_TRUE(std::isnan(d.argmax_logprob(9)));
}

INSTANTIATE_TEST_SUITE_P(archs, step_graphs, ::testing::Values("llama", "qwen2"));

}  // namespace
}  // namespace qf::test
