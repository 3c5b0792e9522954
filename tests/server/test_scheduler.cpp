// Scheduler cancellation: queued and running jobs, by request and by
// document, latest-wins groups, background work preemption, shutdown. Every
// wait is on an event (no sleeps decide an outcome).
#include <gtest/gtest.h>

#include <condition_variable>
#include <future>
#include <mutex>

#include "server/core/scheduler.h"
#include "server/core/stats.h"

using namespace qf;
using namespace qf::server;

namespace {

// A provider whose complete() blocks until cancelled, reporting when it starts.
class gate_provider final : public completion_provider {
 public:
  completion_result complete(const completion_request& req, const cancel_token& cancel) override {
    {
      std::lock_guard<std::mutex> lock(mu);
      started.push_back(req.uri);
    }
    cv.notify_all();
    while (!cancel.is_cancelled()) std::this_thread::yield();
    std::lock_guard<std::mutex> lock(mu);
    seen_reason = cancel.reason();
    return {};
  }
  bool background_step(const cancel_token& cancel) override {
    {
      std::lock_guard<std::mutex> lock(mu);
      ++background_calls;
    }
    cv.notify_all();
    if (!block_background) return false;
    while (!cancel.is_cancelled()) std::this_thread::yield();
    std::lock_guard<std::mutex> lock(mu);
    background_reason = cancel.reason();
    block_background = false;
    return false;
  }
  std::string describe() const override { return "gate"; }

  void wait_started(std::size_t n) {
    std::unique_lock<std::mutex> lock(mu);
    cv.wait(lock, [&] { return started.size() >= n; });
  }
  void wait_background(int n) {
    std::unique_lock<std::mutex> lock(mu);
    cv.wait(lock, [&] { return background_calls >= n; });
  }

  std::mutex mu;
  std::condition_variable cv;
  std::vector<std::string> started;
  cancel_reason seen_reason = cancel_reason::none;
  cancel_reason background_reason = cancel_reason::none;
  int background_calls = 0;
  bool block_background = false;
};

struct fixture {
  stats_collector stats;
  scheduler sched{&stats, true};
  gate_provider* provider = nullptr;

  explicit fixture(bool block_background = false) {
    auto p = std::make_unique<gate_provider>();
    p->block_background = block_background;
    provider = p.get();
    sched.start();
    std::promise<void> installed;
    auto holder = std::make_shared<std::unique_ptr<gate_provider>>(std::move(p));
    sched.post_task([&installed, holder](scheduler::provider_slot& slot) {
      slot = std::move(*holder);
      installed.set_value();
    });
    installed.get_future().wait();
  }

  struct outcome {
    std::promise<cancel_reason> cancelled;
    std::atomic<int> cancel_calls{0};
    std::atomic<bool> ran{false};
  };

  void submit(const std::string& key, const std::string& uri, outcome& o, const std::string& group = "") {
    scheduler::job j;
    j.key = key;
    j.uri = uri;
    j.group = group;
    j.run = [&o](completion_provider* p, const cancel_token& t) {
      o.ran = true;
      completion_request req;
      req.uri = "run";
      p->complete(req, t);
    };
    j.on_cancel = [&o](cancel_reason why) {
      if (o.cancel_calls++ == 0) o.cancelled.set_value(why);
    };
    sched.submit(std::move(j));
  }
};

}  // namespace

TEST(Scheduler, CancelQueuedAndRunningRequests) {
  fixture f;
  fixture::outcome running, queued;
  f.submit("1", "file:///a", running);
  f.provider->wait_started(1);
  f.submit("2", "file:///b", queued);
  EXPECT_EQ(f.sched.queued(), 1u);

  // Queued: answered at once, never runs.
  EXPECT_TRUE(f.sched.cancel("2", cancel_reason::cancelled));
  EXPECT_EQ(queued.cancelled.get_future().get(), cancel_reason::cancelled);
  EXPECT_EQ(f.sched.queued(), 0u);

  // Running: on_cancel fires on this thread before the worker is free.
  auto fut = running.cancelled.get_future();
  EXPECT_TRUE(f.sched.cancel("1", cancel_reason::cancelled));
  EXPECT_EQ(fut.wait_for(std::chrono::seconds(0)), std::future_status::ready);
  EXPECT_EQ(fut.get(), cancel_reason::cancelled);
  EXPECT_FALSE(f.sched.cancel("1", cancel_reason::cancelled));  // not twice
  f.sched.stop();
  EXPECT_FALSE(queued.ran);
  EXPECT_EQ(running.cancel_calls, 1);
  EXPECT_EQ(queued.cancel_calls, 1);
  // The running job's cancellation measured the time until the worker was free.
  auto s = f.stats.to_json(0);
  EXPECT_EQ(s.at("cancelToFreeMs").at("count").to_number<std::uint64_t>(), 1u);
}

TEST(Scheduler, DocumentEditCancelsItsQueuedAndRunningJobsOnly) {
  fixture f;
  fixture::outcome a1, other, a2;
  f.submit("1", "file:///a", a1);
  f.provider->wait_started(1);
  f.submit("2", "file:///b", other);
  f.submit("3", "file:///a", a2);
  EXPECT_EQ(f.sched.cancel_document("file:///a", cancel_reason::content_modified), 2u);
  EXPECT_EQ(a1.cancelled.get_future().get(), cancel_reason::content_modified);
  EXPECT_EQ(a2.cancelled.get_future().get(), cancel_reason::content_modified);
  EXPECT_EQ(other.cancel_calls, 0);
  // The worker moves on to the other document's job.
  f.provider->wait_started(2);
  EXPECT_TRUE(f.sched.cancel("2", cancel_reason::cancelled));
  f.sched.stop();
  EXPECT_FALSE(a2.ran);
  EXPECT_TRUE(other.ran);
}

TEST(Scheduler, LatestRequestWinsWithinAGroup) {
  fixture f;
  fixture::outcome first, other, second, third;
  f.submit("1", "file:///a", first, "a#completion");
  f.provider->wait_started(1);
  // A job of another group queued ahead keeps the worker busy once `first`
  // lets go (the queue is FIFO), so `second` is still queued when `third`
  // arrives, whatever the thread timing.
  f.submit("9", "file:///b", other, "b#completion");
  f.submit("2", "file:///a", second, "a#completion");
  EXPECT_EQ(first.cancelled.get_future().get(), cancel_reason::preempted);  // running one
  f.provider->wait_started(2);                                             // `other` runs now
  f.submit("3", "file:///a", third, "a#completion");
  EXPECT_EQ(second.cancelled.get_future().get(), cancel_reason::preempted);  // queued one
  EXPECT_TRUE(f.sched.cancel("9", cancel_reason::cancelled));
  f.provider->wait_started(3);  // the latest request of the group runs
  f.sched.stop();
  EXPECT_TRUE(first.ran);
  EXPECT_FALSE(second.ran);
  EXPECT_TRUE(third.ran);
  EXPECT_EQ(third.cancelled.get_future().get(), cancel_reason::shutdown);
  EXPECT_EQ(other.cancel_calls, 1);
}

TEST(Scheduler, BackgroundWorkRunsWhenIdleAndIsPreempted) {
  fixture f(/*block_background=*/true);
  f.provider->wait_background(1);
  fixture::outcome job;
  f.submit("1", "file:///a", job);
  f.provider->wait_started(1);
  {
    std::lock_guard<std::mutex> lock(f.provider->mu);
    EXPECT_EQ(f.provider->background_reason, cancel_reason::preempted);
  }
  f.sched.cancel("1", cancel_reason::cancelled);
  // After the job, background work resumes (and now finishes at once).
  f.provider->wait_background(2);
  EXPECT_GE(f.sched.background_steps(), 2u);
  f.sched.stop();
}

TEST(Scheduler, StopAnswersEverythingWithShutdown) {
  fixture f;
  fixture::outcome running, queued;
  f.submit("1", "file:///a", running);
  f.provider->wait_started(1);
  f.submit("2", "file:///b", queued);
  f.sched.stop();
  EXPECT_EQ(running.cancelled.get_future().get(), cancel_reason::shutdown);
  EXPECT_EQ(queued.cancelled.get_future().get(), cancel_reason::shutdown);
  fixture::outcome late;
  f.submit("3", "file:///c", late);
  EXPECT_EQ(late.cancelled.get_future().get(), cancel_reason::shutdown);
  EXPECT_FALSE(late.ran);
}

TEST(Scheduler, NoProviderMeansRunGetsNull) {
  stats_collector stats;
  scheduler sched(&stats);
  sched.start();
  std::promise<bool> got_null;
  scheduler::job j;
  j.key = "1";
  j.uri = "u";
  j.run = [&](completion_provider* p, const cancel_token&) { got_null.set_value(p == nullptr); };
  sched.submit(std::move(j));
  EXPECT_TRUE(got_null.get_future().get());
  sched.stop();
}
