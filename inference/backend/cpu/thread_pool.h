// Persistent thread pool for the CPU kernels.
//
// Workers are created once and park between jobs: they spin briefly on a
// generation counter (a decode step issues many small jobs back to back) and
// then sleep on it with std::atomic::wait. run() publishes a job, runs share 0
// on the calling thread and returns when every share is done. One run() at a
// time; the pool is not reentrant.
#pragma once

#include <atomic>
#include <functional>
#include <thread>
#include <vector>

namespace qf::infer::cpu {

class thread_pool {  // persistent workers, created once; no thread creation per token
 public:
  explicit thread_pool(int n_threads);  // n_threads counts the calling thread; <=0 picks hardware_concurrency
  ~thread_pool();
  thread_pool(const thread_pool&) = delete;
  thread_pool& operator=(const thread_pool&) = delete;
  int size() const;
  // Runs fn(ith, nth) for every ith in [0, nth) concurrently (the caller runs ith == 0)
  // and returns when all have finished.
  void run(const std::function<void(int ith, int nth)>& fn);

 private:
  void worker(int ith);

  int n_threads_;
  std::vector<std::thread> workers_;
  const std::function<void(int, int)>* job_ = nullptr;
  alignas(64) std::atomic<uint32_t> generation_{0};
  alignas(64) std::atomic<int> pending_{0};
  std::atomic<bool> stop_{false};
};

}  // namespace qf::infer::cpu
