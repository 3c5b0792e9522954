// The persistent thread pool: every share runs exactly once per run(), the
// caller runs share 0, runs can follow each other back to back, and results
// written by workers are visible when run() returns.
#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <thread>
#include <vector>

#include "inference/backend/cpu/thread_pool.h"

using qf::infer::cpu::thread_pool;

TEST(thread_pool, each_share_runs_once_per_job) {
  for (int n : {1, 2, 4}) {
    thread_pool pool(n);
    EXPECT_EQ(pool.size(), n);
    std::vector<int> hits(static_cast<size_t>(n), 0);
    for (int job = 0; job < 2000; ++job) {
      pool.run([&](int ith, int nth) {
        ASSERT_EQ(nth, n);
        hits[static_cast<size_t>(ith)] += 1;  // each share writes only its own slot
      });
    }
    for (int h : hits) EXPECT_EQ(h, 2000);
  }
}

TEST(thread_pool, caller_runs_share_zero) {
  thread_pool pool(3);
  const auto me = std::this_thread::get_id();
  std::atomic<int> zero_on_caller{0}, others_on_caller{0};
  pool.run([&](int ith, int) {
    if (std::this_thread::get_id() == me) (ith == 0 ? zero_on_caller : others_on_caller)++;
  });
  EXPECT_EQ(zero_on_caller.load(), 1);
  EXPECT_EQ(others_on_caller.load(), 0);
}

TEST(thread_pool, default_size_and_parallel_sum) {
  thread_pool pool(0);
  EXPECT_GE(pool.size(), 1);
  std::vector<long> partial(static_cast<size_t>(pool.size()));
  pool.run([&](int ith, int nth) {
    long s = 0;
    for (long i = ith; i < 100000; i += nth) s += i;
    partial[static_cast<size_t>(ith)] = s;
  });
  long total = 0;
  for (long p : partial) total += p;
  EXPECT_EQ(total, 100000L * 99999 / 2);
}

TEST(thread_pool, survives_idle_periods) {
  thread_pool pool(2);
  std::atomic<int> count{0};
  for (int i = 0; i < 3; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(30));  // workers fall asleep
    pool.run([&](int, int) { count++; });
  }
  EXPECT_EQ(count.load(), 6);
}

TEST(thread_pool, dynamic_jobs_share_claimed_work_exactly_once) {
  thread_pool pool(3);
  for (int job = 0; job < 3000; ++job) {
    std::atomic<int> next{0}, total{0};
    std::vector<std::atomic<int>> seen(64);
    pool.run_dynamic([&](int, int) {
      for (int i; (i = next.fetch_add(1)) < 64;) {
        seen[static_cast<size_t>(i)]++;
        total++;
      }
    });
    ASSERT_EQ(total.load(), 64);  // all work done when run_dynamic returns
    for (auto& s : seen) ASSERT_EQ(s.load(), 1);
    // Static jobs interleaved with dynamic ones still run every share once.
    std::atomic<int> shares{0};
    pool.run([&](int, int) { shares++; });
    ASSERT_EQ(shares.load(), 3);
  }
}

// A share may leave its worker memory to read once the share is done: the
// worker holds a reference to it while it reads and lets go when it is done
// or, at the latest, when the next job comes (a range far too long to read
// in the meantime stops there).
TEST(thread_pool, reads_after_a_share_and_lets_go_by_the_next_job) {
  thread_pool pool(2);
  for (size_t mib : {size_t{1}, size_t{64}}) {
    std::atomic<bool> released{false};
    {
      const size_t bytes = mib << 20;
      auto* mem = new uint8_t[bytes]();
      const std::shared_ptr<const void> keep(mem, [&released](const void* p) {
        delete[] static_cast<const uint8_t*>(p);
        released = true;
      });
      pool.run([&](int ith, int) {
        if (ith == 1) pool.read_after_share(ith, {thread_pool::read_range{mem, bytes, keep}});
        if (ith == 0) pool.read_after_share(ith, {thread_pool::read_range{mem, bytes, keep}});  // ignored
      });
    }
    pool.run([](int, int) {});  // every worker joins it, so each has let go before
    EXPECT_TRUE(released.load()) << mib;
  }
}
