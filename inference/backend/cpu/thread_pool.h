// Persistent thread pool for the CPU kernels.
//
// Workers are created once and park between jobs: they spin briefly on a
// generation counter (a decode step issues many small jobs back to back) and
// then sleep on it with std::atomic::wait. run() publishes a job, runs share 0
// on the calling thread and returns when every share is done.
//
// A worker joins a job by incrementing a control word that also holds the
// job's generation, and reads the job only after joining, so it can never run
// a job that is over. run_dynamic() closes the job when the caller's share
// returns: workers that have not joined by then skip it. That is right for
// jobs whose shares claim work that any share may take (matmul) and keeps a
// worker the OS has not scheduled yet (a busy machine) from stalling the
// caller. One run at a time; the pool is not reentrant.
//
// A worker's share may leave it memory to read once the share is done
// (read_after_share): between two decode matmuls the calling thread runs the
// small serial ops alone (norms, attention, quantizing the next activation
// row) while memory idles, so a parked worker reads the start of its part of
// the next matmul's weights into its caches meanwhile, and stops at the next
// job. The ranges hold a reference to the memory they read.
#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
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
  // Like run(), but shares that have not started when share 0 returns are
  // skipped: only for jobs where any share may end up doing all the work.
  void run_dynamic(const std::function<void(int ith, int nth)>& fn);

  struct read_range {
    const uint8_t* data = nullptr;
    size_t bytes = 0;
    std::shared_ptr<const void> keep;  // owns data's memory while the worker reads it
  };
  static constexpr size_t k_max_read_ranges = 4;
  using read_list = std::array<read_range, k_max_read_ranges>;
  // From inside share ith > 0 of a job: once the share returns, the worker
  // reads `ranges` a cache line at a time until the next job is published.
  void read_after_share(int ith, read_list ranges);

 private:
  void run_job(const std::function<void(int, int)>& fn, bool dynamic);
  void worker(int ith);
  void read_ahead(int ith, uint32_t seen);  // worker ith's read_after_share ranges, until generation_ != seen

  struct alignas(64) worker_slot {
    read_list after;  // set by the worker's own share, read by the worker once the share is done
  };

  static constexpr uint64_t k_closed = 1ull << 31;
  static constexpr uint64_t k_joined_mask = k_closed - 1;

  int n_threads_;
  std::vector<worker_slot> slots_;  // [n_threads]; slot 0 unused
  std::vector<std::thread> workers_;
  const std::function<void(int, int)>* job_ = nullptr;  // valid while a joined worker runs it
  alignas(64) std::atomic<uint32_t> generation_{0};
  alignas(64) std::atomic<uint64_t> ctl_{0};  // generation << 32 | closed | joined
  alignas(64) std::atomic<uint32_t> done_{0};
  std::atomic<bool> stop_{false};
};

}  // namespace qf::infer::cpu
