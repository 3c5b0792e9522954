// The daemon's turn on a shared engine: one call at a time, on the caller's
// own thread, foreground before background, least recently served session
// first, background preempted by a foreground call, a cancelled waiting call
// leaves without running.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <future>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "server/daemon/engine_worker.h"

using qf::cancel_reason;
using qf::cancel_source;
using qf::cancel_token;
using qf::server::daemon::engine_worker;
using namespace std::chrono_literals;

namespace {

// A short pause between callers (the order of arrival of calls that queue).
void settle() { std::this_thread::sleep_for(50ms); }

// Session `session` takes the worker until `gate` opens; returns once its call runs.
std::thread hold_worker(engine_worker& w, std::uint64_t session, std::shared_future<void> gate) {
  static const cancel_source none;
  auto running = std::make_shared<std::atomic<bool>>(false);
  std::thread t([&w, session, gate, running] {
    w.run(session, engine_worker::kind::foreground, none.token(), [&](const cancel_token&) {
      *running = true;
      gate.wait();
    });
  });
  for (int i = 0; i < 2000 && !*running; ++i) std::this_thread::sleep_for(5ms);
  return t;
}

// Waits until `n` calls wait behind the running one: on a loaded machine a
// caller's thread may take longer than a pause to reach the queue.
void until_waiting(const engine_worker& w, std::size_t n) {
  for (int i = 0; i < 2000 && w.calls_waiting() < n; ++i) std::this_thread::sleep_for(5ms);
}

}  // namespace

TEST(EngineWorker, ForegroundFirstThenLeastRecentlyServedSession) {
  engine_worker w;
  cancel_source none;
  std::promise<void> release;
  std::shared_future<void> gate = release.get_future().share();
  std::mutex mu;
  std::vector<std::string> order;
  auto record = [&](std::string what) {
    std::lock_guard<std::mutex> lock(mu);
    order.push_back(std::move(what));
  };
  // Session 1 holds the worker until released.
  std::thread blocker = hold_worker(w, 1, gate);
  std::vector<std::thread> callers;
  auto call = [&](std::uint64_t session, engine_worker::kind k, std::string name) {
    const std::size_t before = w.calls_waiting();
    callers.emplace_back([&, session, k, name] {
      w.run(session, k, none.token(), [&, name](const cancel_token&) { record(name); });
    });
    until_waiting(w, before + 1);
  };
  call(3, engine_worker::kind::background, "bg3");
  call(1, engine_worker::kind::foreground, "fg1");  // session 1 was served last (it is running)
  call(2, engine_worker::kind::foreground, "fg2");
  release.set_value();
  blocker.join();
  for (auto& t : callers) t.join();
  ASSERT_EQ(order.size(), 3u);
  EXPECT_EQ(order[0], "fg2");  // never served yet, though it came after fg1
  EXPECT_EQ(order[1], "fg1");
  EXPECT_EQ(order[2], "bg3");  // background only once no foreground call waits
}

TEST(EngineWorker, FloodingSessionDoesNotStarveAnother) {
  engine_worker w;
  cancel_source none;
  std::atomic<bool> stop{false};
  std::atomic<int> flood_calls{0};
  // Session 1 calls back to back, as fast as it can.
  std::thread flood([&] {
    while (!stop)
      w.run(1, engine_worker::kind::foreground, none.token(), [&](const cancel_token&) {
        ++flood_calls;
        std::this_thread::sleep_for(2ms);
      });
  });
  settle();
  // Session 2 gets every one of its calls through, each after at most the
  // flooding session's running call and one more (counted when session 2's
  // call runs: what the flood does after it does not matter).
  for (int i = 0; i < 10; ++i) {
    const int before = flood_calls.load();
    int at_run = 0;
    w.run(2, engine_worker::kind::foreground, none.token(), [&](const cancel_token&) { at_run = flood_calls.load(); });
    EXPECT_LE(at_run - before, 2) << "call " << i;
  }
  stop = true;
  flood.join();
}

TEST(EngineWorker, ForegroundPreemptsRunningBackground) {
  engine_worker w;
  cancel_source none;
  std::atomic<bool> started{false};
  cancel_reason seen = cancel_reason::none;
  std::thread bg([&] {
    w.run(1, engine_worker::kind::background, none.token(), [&](const cancel_token& t) {
      started = true;
      const auto until = std::chrono::steady_clock::now() + 10s;
      while (!t.is_cancelled() && std::chrono::steady_clock::now() < until) std::this_thread::sleep_for(1ms);
      seen = t.reason();
    });
  });
  while (!started) std::this_thread::sleep_for(1ms);
  bool ran = false;
  EXPECT_TRUE(w.run(2, engine_worker::kind::foreground, none.token(), [&](const cancel_token&) { ran = true; }));
  bg.join();
  EXPECT_TRUE(ran);
  EXPECT_EQ(seen, cancel_reason::preempted);
}

TEST(EngineWorker, CancelledWaitingCallLeavesWithoutRunning) {
  engine_worker w;
  cancel_source none, mine;
  std::promise<void> release;
  std::shared_future<void> gate = release.get_future().share();
  std::thread blocker = hold_worker(w, 1, gate);
  std::atomic<bool> ran{false};
  std::future<bool> waiting = std::async(std::launch::async, [&] {
    return w.run(2, engine_worker::kind::foreground, mine.token(), [&](const cancel_token&) { ran = true; });
  });
  until_waiting(w, 1);
  mine.cancel(cancel_reason::content_modified);
  EXPECT_EQ(waiting.wait_for(5s), std::future_status::ready);  // while session 1 still holds the worker
  EXPECT_FALSE(waiting.get());
  release.set_value();
  blocker.join();
  EXPECT_FALSE(ran);
}

TEST(EngineWorker, ExceptionReachesTheCaller) {
  engine_worker w;
  cancel_source none;
  EXPECT_THROW(w.run(1, engine_worker::kind::foreground, none.token(),
                     [](const cancel_token&) { throw std::runtime_error("source failed"); }),
               std::runtime_error);
  EXPECT_TRUE(w.run(1, engine_worker::kind::foreground, none.token(), [](const cancel_token&) {}));
}

TEST(EngineWorker, CallsRunOnTheCallersThreadOneAtATime) {
  engine_worker w;
  cancel_source none;
  std::atomic<int> inside{0}, most{0}, wrong_thread{0};
  std::vector<std::thread> callers;
  for (std::uint64_t session = 1; session <= 4; ++session)
    callers.emplace_back([&, session] {
      const std::thread::id me = std::this_thread::get_id();
      for (int i = 0; i < 20; ++i)
        w.run(session, engine_worker::kind::foreground, none.token(), [&](const cancel_token&) {
          if (std::this_thread::get_id() != me) ++wrong_thread;
          const int n = ++inside;
          for (int m = most.load(); n > m && !most.compare_exchange_weak(m, n);) {
          }
          std::this_thread::sleep_for(200us);
          --inside;
        });
    });
  for (auto& t : callers) t.join();
  EXPECT_EQ(wrong_thread.load(), 0);  // no handoff to a thread of the engine's
  EXPECT_EQ(most.load(), 1);          // never two calls into the provider at once
  EXPECT_EQ(w.calls_run(), 80u);
  EXPECT_EQ(w.calls_waiting(), 0u);
}

TEST(EngineWorker, StoppedEngineRefusesCalls) {
  engine_worker w;
  cancel_source none;
  w.stop();
  bool ran = false;
  EXPECT_FALSE(w.run(1, engine_worker::kind::foreground, none.token(), [&](const cancel_token&) { ran = true; }));
  EXPECT_FALSE(ran);
}
