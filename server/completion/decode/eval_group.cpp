// eval_group (see the header): a rendezvous of member threads; the last to
// arrive runs the batch.
#include "server/completion/decode/eval_group.h"

#include <stdexcept>
#include <utility>

namespace qf::server::completion {

class eval_group::member final : public lm_sequence {
 public:
  member(eval_group& g, lm_sequence& seq) : g_(g), seq_(seq) {}
  ~member() override { g_.leave(); }
  int64_t n_ctx() const override { return seq_.n_ctx(); }
  const std::vector<int32_t>& tokens() const override { return seq_.tokens(); }
  void keep_first(int64_t n) override { seq_.keep_first(n); }
  void move_range(int64_t, int64_t, int64_t) override {
    throw std::logic_error("eval_group: move_range on a member (it would run the engine outside the group's batch)");
  }
  lm_eval_result eval(std::span<const int32_t> toks, lm_logits mode, const cancel_token& cancel,
                      lm_output out) override {
    request r;
    r.entry.seq = &seq_;
    r.entry.toks = toks;
    r.entry.mode = mode;
    r.entry.cancel = cancel;
    r.out = out;
    return g_.submit(r);
  }
  int32_t best_token(int64_t i) const override { return seq_.best_token(i); }
  float best_logprob(int64_t i) const override { return seq_.best_logprob(i); }
  std::span<const float> logits(int64_t i) const override { return seq_.logits(i); }
  size_t kv_bytes() const override { return seq_.kv_bytes(); }

 private:
  eval_group& g_;
  lm_sequence& seq_;
};

std::unique_ptr<lm_sequence> eval_group::join(lm_sequence& seq) { return std::make_unique<member>(*this, seq); }

int64_t eval_group::batches() const {
  std::lock_guard<std::mutex> lock(mu_);
  return batches_;
}

lm_eval_result eval_group::submit(request& r) {
  std::unique_lock<std::mutex> lock(mu_);
  waiting_.push_back(&r);
  if (static_cast<int>(waiting_.size()) == members_) run_locked(lock);
  cv_.wait(lock, [&] { return r.done; });
  if (r.error) std::rethrow_exception(r.error);
  return r.entry.result;
}

void eval_group::leave() {
  std::unique_lock<std::mutex> lock(mu_);
  --members_;
  if (members_ > 0 && static_cast<int>(waiting_.size()) == members_) run_locked(lock);
}

void eval_group::run_locked(std::unique_lock<std::mutex>& lock) {
  std::vector<request*> reqs = std::move(waiting_);
  waiting_.clear();
  // Every other member is waiting in submit(): nobody else can touch the
  // engine or the list while it runs unlocked.
  lock.unlock();
  std::vector<lm_batch_entry> entries;
  entries.reserve(reqs.size());
  lm_output out = lm_output::best;
  for (request* q : reqs) {
    entries.push_back(q->entry);
    if (q->out == lm_output::full) out = lm_output::full;
  }
  std::exception_ptr error;
  try {
    be_.eval_batch(entries, out);
  } catch (...) {
    error = std::current_exception();
  }
  lock.lock();
  ++batches_;
  for (size_t i = 0; i < reqs.size(); ++i) {
    reqs[i]->entry.result = entries[i].result;
    reqs[i]->error = error;
    reqs[i]->done = true;
  }
  cv_.notify_all();
}

}  // namespace qf::server::completion
