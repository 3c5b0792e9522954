// The daemon tests' shared engine: the scripted model of the pipeline tests
// (tests/server/completion/fake_lm.h) behind a backend that counts its live
// sequences (a session's KV slots freed when it ends show there), tells a
// hook when a sequence comes or goes and when an eval is held, and holds an
// eval whose sequence holds the text "BLOCK" until its cancel token fires
// (polled, as the engine does between layers; 60 s at most), so that a
// test can keep a session's request in the engine while a window is killed.
// Used by the engine pool's tests, the load tests and quickfill_test_daemon.
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "tests/server/completion/fake_lm.h"

namespace qf::daemon_test {

using namespace qf::server::completion;

class scripted_engine final : public lm_backend {
 public:
  explicit scripted_engine(std::shared_ptr<qf::test::fake_backend> model = std::make_shared<qf::test::fake_backend>())
      : model_(std::move(model)) {}

  qf::test::fake_backend& model() { return *model_; }
  int live() const { return live_.load(); }
  int most_live() const { return most_.load(); }
  // Told "made N", "freed N" (the live sequences after it) and "holding".
  std::function<void(const std::string&)> say;

  const lm_vocab& vocab() const override { return model_->vocab(); }
  std::unique_ptr<lm_sequence> new_sequence(int64_t n_ctx) override;
  size_t kv_bytes_per_token() const override { return model_->kv_bytes_per_token(); }
  size_t sequence_bytes(int64_t n_ctx) const override { return model_->sequence_bytes(n_ctx); }
  int64_t n_ctx_train() const override { return model_->n_ctx_train(); }
  std::string describe() const override { return "scripted"; }

 private:
  class sequence;
  void tell(const std::string& what) const {
    if (say) say(what);
  }
  std::shared_ptr<qf::test::fake_backend> model_;
  std::atomic<int> live_{0}, most_{0};
};

class scripted_engine::sequence final : public lm_sequence {
 public:
  sequence(scripted_engine& e, std::unique_ptr<lm_sequence> inner) : e_(e), inner_(std::move(inner)) {
    const int n = ++e_.live_;
    int most = e_.most_.load();
    while (n > most && !e_.most_.compare_exchange_weak(most, n)) {
    }
    e_.tell("made " + std::to_string(n));
  }
  ~sequence() override { e_.tell("freed " + std::to_string(--e_.live_)); }
  int64_t n_ctx() const override { return inner_->n_ctx(); }
  const std::vector<int32_t>& tokens() const override { return inner_->tokens(); }
  void keep_first(int64_t n) override { inner_->keep_first(n); }
  void move_range(int64_t b, int64_t e, int64_t d) override { inner_->move_range(b, e, d); }
  lm_eval_result eval(std::span<const int32_t> toks, lm_logits mode, const cancel_token& cancel,
                      lm_output out) override {
    if (blocked(toks)) {
      e_.tell("holding");
      const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(60);
      while (!cancel.is_cancelled() && std::chrono::steady_clock::now() < give_up)
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
      lm_eval_result r;
      r.cancelled = true;
      return r;
    }
    return inner_->eval(toks, mode, cancel, out);
  }
  int32_t best_token(int64_t i) const override { return inner_->best_token(i); }
  float best_logprob(int64_t i) const override { return inner_->best_logprob(i); }
  std::span<const float> logits(int64_t i) const override { return inner_->logits(i); }
  size_t kv_bytes() const override { return inner_->kv_bytes(); }
  void copy_prefix(const lm_sequence& src, int64_t n) override {
    const auto* s = dynamic_cast<const sequence*>(&src);
    inner_->copy_prefix(s ? *s->inner_ : src, n);
  }

 private:
  // The sequence's tokens and `toks` hold "BLOCK" (one byte a token in the scripted vocabulary).
  bool blocked(std::span<const int32_t> toks) const {
    static const std::vector<int32_t> word{'B', 'L', 'O', 'C', 'K'};
    std::vector<int32_t> all = inner_->tokens();
    all.insert(all.end(), toks.begin(), toks.end());
    return std::search(all.begin(), all.end(), word.begin(), word.end()) != all.end();
  }
  scripted_engine& e_;
  std::unique_ptr<lm_sequence> inner_;
};

inline std::unique_ptr<lm_sequence> scripted_engine::new_sequence(int64_t n_ctx) {
  return std::make_unique<sequence>(*this, model_->new_sequence(n_ctx));
}

}  // namespace qf::daemon_test
