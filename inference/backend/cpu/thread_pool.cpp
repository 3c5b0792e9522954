// Persistent thread pool: see thread_pool.h for the protocol.
#include "inference/backend/cpu/thread_pool.h"

#include <immintrin.h>

namespace qf::infer::cpu {
namespace {
constexpr int k_spin = 1 << 14;  // ~tens of microseconds of polling before sleeping
inline void cpu_relax() { _mm_pause(); }
}  // namespace

thread_pool::thread_pool(int n_threads) {
  if (n_threads <= 0) n_threads = static_cast<int>(std::thread::hardware_concurrency());
  if (n_threads <= 0) n_threads = 1;
  n_threads_ = n_threads;
  workers_.reserve(static_cast<size_t>(n_threads - 1));
  for (int i = 1; i < n_threads; ++i) workers_.emplace_back([this, i] { worker(i); });
}

thread_pool::~thread_pool() {
  stop_.store(true, std::memory_order_release);
  generation_.fetch_add(1, std::memory_order_acq_rel);
  generation_.notify_all();
  for (auto& t : workers_) t.join();
}

int thread_pool::size() const { return n_threads_; }

void thread_pool::run(const std::function<void(int ith, int nth)>& fn) {
  if (n_threads_ == 1) {
    fn(0, 1);
    return;
  }
  job_ = &fn;
  pending_.store(n_threads_ - 1, std::memory_order_relaxed);
  generation_.fetch_add(1, std::memory_order_release);
  generation_.notify_all();
  fn(0, n_threads_);
  for (int spins = 0; pending_.load(std::memory_order_acquire) != 0; ++spins) {
    if (spins < k_spin) {
      cpu_relax();
    } else {
      int p = pending_.load(std::memory_order_acquire);
      if (p != 0) pending_.wait(p, std::memory_order_acquire);
    }
  }
  job_ = nullptr;
}

void thread_pool::worker(int ith) {
  uint32_t seen = 0;
  for (;;) {
    uint32_t g = generation_.load(std::memory_order_acquire);
    for (int spins = 0; g == seen; ++spins) {
      if (spins < k_spin) {
        cpu_relax();
      } else {
        generation_.wait(seen, std::memory_order_acquire);
      }
      g = generation_.load(std::memory_order_acquire);
    }
    seen = g;
    if (stop_.load(std::memory_order_acquire)) return;
    (*job_)(ith, n_threads_);
    if (pending_.fetch_sub(1, std::memory_order_acq_rel) == 1) pending_.notify_one();
  }
}

}  // namespace qf::infer::cpu
