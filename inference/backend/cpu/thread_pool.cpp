// Persistent thread pool: see thread_pool.h for the protocol.
#include "inference/backend/cpu/thread_pool.h"

#include <immintrin.h>

namespace qf::infer::cpu {
namespace {
constexpr int k_spin = 1 << 12;  // a few hundred microseconds of polling before sleeping
inline void cpu_relax() { _mm_pause(); }
}  // namespace

thread_pool::thread_pool(int n_threads) {
  if (n_threads <= 0) n_threads = static_cast<int>(std::thread::hardware_concurrency());
  if (n_threads <= 0) n_threads = 1;
  n_threads_ = n_threads;
  slots_.resize(static_cast<size_t>(n_threads));
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

void thread_pool::run(const std::function<void(int ith, int nth)>& fn) { run_job(fn, false); }
void thread_pool::run_dynamic(const std::function<void(int ith, int nth)>& fn) { run_job(fn, true); }

void thread_pool::run_job(const std::function<void(int, int)>& fn, bool dynamic) {
  if (n_threads_ == 1) {
    fn(0, 1);
    return;
  }
  job_ = &fn;
  done_.store(0, std::memory_order_relaxed);
  const uint32_t g = generation_.load(std::memory_order_relaxed) + 1;
  ctl_.store(static_cast<uint64_t>(g) << 32, std::memory_order_release);  // publishes job_ to joiners
  generation_.store(g, std::memory_order_release);
  generation_.notify_all();
  fn(0, n_threads_);
  uint32_t expected = static_cast<uint32_t>(n_threads_ - 1);
  if (dynamic) expected = static_cast<uint32_t>(ctl_.fetch_or(k_closed, std::memory_order_acq_rel) & k_joined_mask);
  for (int spins = 0;; ++spins) {
    const uint32_t d = done_.load(std::memory_order_acquire);
    if (d == expected) break;
    if (spins < k_spin) cpu_relax();
    else done_.wait(d, std::memory_order_acquire);
  }
}

void thread_pool::read_after_share(int ith, read_list ranges) {
  if (ith > 0 && ith < n_threads_) slots_[static_cast<size_t>(ith)].after = std::move(ranges);
}

void thread_pool::read_ahead(int ith, uint32_t seen) {
  read_list& after = slots_[static_cast<size_t>(ith)].after;
  uint8_t sink = 0;
  for (auto& r : after) {
    for (size_t off = 0; off < r.bytes; off += 64) {
      if (off % 1024 == 0 && generation_.load(std::memory_order_relaxed) != seen) goto done;
      sink ^= r.data[off];
    }
  }
done:
  asm volatile("" : : "r"(sink));  // the loads must happen
  after = {};
}

void thread_pool::worker(int ith) {
  uint32_t seen = 0;
  for (;;) {
    uint32_t g = generation_.load(std::memory_order_acquire);
    for (int spins = 0; g == seen; ++spins) {
      if (spins < k_spin) cpu_relax();
      else generation_.wait(seen, std::memory_order_acquire);
      g = generation_.load(std::memory_order_acquire);
    }
    seen = g;
    if (stop_.load(std::memory_order_acquire)) return;
    // Join job g unless it is closed or already replaced by a newer one.
    uint64_t v = ctl_.load(std::memory_order_acquire);
    bool joined = false;
    while ((v >> 32) == g && !(v & k_closed)) {
      if (ctl_.compare_exchange_weak(v, v + 1, std::memory_order_acq_rel, std::memory_order_acquire)) {
        joined = true;
        break;
      }
    }
    if (!joined) continue;
    (*job_)(ith, n_threads_);
    done_.fetch_add(1, std::memory_order_acq_rel);
    done_.notify_one();
    if (slots_[static_cast<size_t>(ith)].after[0].bytes) read_ahead(ith, g);
  }
}

}  // namespace qf::infer::cpu
