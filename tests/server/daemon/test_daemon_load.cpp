// The daemon under load: several sessions on one shared engine at once,
// their calls' order read from the engine's turn observer (engine_worker.h).
// * A session flooding calls lets a quiet one in after at most one of its
//   calls.
// * A session that ends mid-call (its window killed) frees the turn, its
//   buffers are closed on the engine, the others keep being answered; end to
//   end, a bridge killed while its request holds the engine of the real
//   daemon (quickfill_test_daemon: the test double as its engine) has that
//   call cancelled and its documents closed, the other window's waiting
//   request is answered and a new window served; and a bridge killed with
//   requests in flight on the real model leaves the daemon serving the others
//   and new ones, the killed session gone from its count.
// * A session whose calls are cancelled mid-evaluation leaves the other
//   sessions' answers exactly as they are when each runs alone.
// * 16 sessions at once are all answered and the shared KV pool stays within
//   completion.cacheMiB while all of them hold documents; end to end, 16
//   bridges on one daemon are all answered.
// * Foreground calls run before waiting background ones, and a background
//   call is preempted when a foreground one arrives.
// The engine is the test double of the server tests (deterministic; "BLOCK"
// holds a call until it is cancelled) or the real pipeline on the scripted
// model, behind the real engine_pool and engine_worker; the end-to-end tests
// run the real quickfill binary (daemon_editor.h). Every wait is on a
// condition, with a generous limit; nothing asserts a duration.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <future>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "server/completion/pipeline/pipeline.h"
#include "server/daemon/engine_pool.h"
#include "tests/server/completion/fake_lm.h"
#include "tests/server/daemon/daemon_editor.h"
#include "tests/server/daemon/pool_requests.h"
#include "tests/server/test_provider.h"
#include "tests/server_process.h"

using qf::cancel_reason;
using qf::cancel_source;
using qf::cancel_token;
using qf::server::daemon::engine_pool;
using qf::server::daemon::engine_worker;
using namespace qf::daemon_test;

namespace {

using event = engine_worker::event;
using kind = engine_worker::kind;

// The engine's turns in the order the worker reports them.
class turn_trace {
 public:
  struct turn {
    event e;
    std::uint64_t session;
    kind k;
  };
  engine_worker::observer observer() {
    return [this](event e, std::uint64_t session, kind k) {
      {
        std::lock_guard<std::mutex> lock(mu_);
        turns_.push_back({e, session, k});
      }
      cv_.notify_all();
    };
  }
  std::vector<turn> snapshot() const {
    std::lock_guard<std::mutex> lock(mu_);
    return turns_;
  }
  // Waits until `cond` holds for the turns so far.
  bool wait_for(const std::function<bool(const std::vector<turn>&)>& cond, std::chrono::milliseconds limit = 60s) {
    std::unique_lock<std::mutex> lock(mu_);
    return cv_.wait_for(lock, limit, [&] { return cond(turns_); });
  }
  bool wait_count(event e, std::uint64_t session, kind k, std::size_t n) {
    return wait_for([&](const std::vector<turn>& t) { return count(t, e, session, k) >= n; });
  }
  std::size_t count_now(event e, std::uint64_t session, kind k) const { return count(snapshot(), e, session, k); }
  static std::size_t count(const std::vector<turn>& t, event e, std::uint64_t session, kind k) {
    return static_cast<std::size_t>(std::count_if(
        t.begin(), t.end(), [&](const turn& x) { return x.e == e && x.session == session && x.k == k; }));
  }

 private:
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::vector<turn> turns_;
};

// What the engine saw besides the turns: the buffers closed on it, the
// reasons its background steps were stopped for, and a hook run at the end of
// each completion (under the engine's turn).
struct engine_watch {
  std::mutex mu;
  std::vector<std::string> closed;
  std::vector<cancel_reason> background_stops;
  std::atomic<bool> hold_background{false};  // a background step runs until cancelled
  std::function<void()> after_complete;
  std::vector<std::string> closed_keys() {
    std::lock_guard<std::mutex> lock(mu);
    return closed;
  }
};

// The engine's provider with `watch` looking on; every call is forwarded.
class watched_provider final : public completion_provider {
 public:
  watched_provider(std::unique_ptr<completion_provider> inner, engine_watch& w) : inner_(std::move(inner)), w_(w) {}
  completion_result complete(const completion_request& req, const cancel_token& cancel) override {
    completion_result r = inner_->complete(req, cancel);
    if (w_.after_complete) w_.after_complete();
    return r;
  }
  bool background_step(const cancel_token& cancel) override {
    if (!w_.hold_background) return inner_->background_step(cancel);
    const auto give_up = std::chrono::steady_clock::now() + 60s;
    while (!cancel.is_cancelled() && std::chrono::steady_clock::now() < give_up) std::this_thread::sleep_for(1ms);
    std::lock_guard<std::mutex> lock(w_.mu);
    w_.background_stops.push_back(cancel.reason());
    return true;
  }
  std::optional<prompt_explanation> explain(const completion_request& req) override { return inner_->explain(req); }
  next_edit_result next_edit(const next_edit_request& req, const cancel_token& cancel) override {
    return inner_->next_edit(req, cancel);
  }
  void document_closed(const std::string& key) override {
    {
      std::lock_guard<std::mutex> lock(w_.mu);
      w_.closed.push_back(key);
    }
    inner_->document_closed(key);
  }
  void sessions_changed(int n) override { inner_->sessions_changed(n); }
  void configure(const completion::completion_settings& s) override { inner_->configure(s); }
  std::string describe() const override { return inner_->describe(); }
  source_health health() const override { return inner_->health(); }

 private:
  std::unique_ptr<completion_provider> inner_;
  engine_watch& w_;
};

// One shared engine whose turns are traced: the test double of the server
// tests, or the real pipeline on the scripted model (`per_token`: its speed).
struct traced_engine {
  turn_trace trace;
  engine_watch watch;
  completion::pipeline* pipe = nullptr;             // touched under the engine's turn only
  std::shared_ptr<qf::test::fake_stats> lm_stats;   // read once every call has returned
  engine_pool pool;

  static traced_engine with_test_double() { return traced_engine(false, {}, 0); }
  traced_engine(bool pipeline, std::chrono::microseconds per_token, std::size_t bytes_per_token)
      : pool([this, pipeline, per_token, bytes_per_token](const provider_options& o,
                                                          std::string*) -> std::unique_ptr<completion_provider> {
          if (!pipeline)
            return std::make_unique<watched_provider>(std::make_unique<qf::server::testing::test_provider>(nullptr),
                                                      watch);
          auto be = std::make_unique<qf::test::fake_backend>();
          be->per_token = per_token;
          if (bytes_per_token) be->bytes_per_token = bytes_per_token;
          lm_stats = be->stats;
          auto p = std::make_unique<completion::pipeline>(std::move(be), o.completion);
          pipe = p.get();
          return std::make_unique<watched_provider>(std::move(p), watch);
        }) {
    pool.observe_turns(trace.observer());
  }
  std::unique_ptr<completion_provider> session(std::uint64_t id,
                                               const completion::completion_settings& s = settings()) {
    return acquire_session(pool, id, s);
  }
};

std::string first_text(const completion_result& r) { return r.items.empty() ? "" : r.items[0].insert_text; }

}  // namespace

TEST(DaemonLoad, a_flooding_session_lets_a_quiet_one_in_after_at_most_one_of_its_calls) {
  traced_engine eng = traced_engine::with_test_double();
  auto flood1 = eng.session(1), flood2 = eng.session(2), quiet = eng.session(3);
  std::atomic<bool> stop{false};
  std::vector<std::thread> floods;
  for (auto* p : {flood1.get(), flood2.get()})
    floods.emplace_back([&stop, p] {
      for (int i = 0; !stop; ++i) p->complete(keystroke("file:///flood.py", "flood", std::string(1 + i % 7, 'x')), {});
    });
  // Both floods run before the quiet session asks.
  ASSERT_TRUE(eng.trace.wait_count(event::started, 1, kind::foreground, 20));
  ASSERT_TRUE(eng.trace.wait_count(event::started, 2, kind::foreground, 20));
  const std::size_t mark = eng.trace.snapshot().size();
  constexpr int asks = 30;
  for (int i = 0; i < asks; ++i) {
    // Each ask meets both floods: each has a call queued or running since the last ask.
    const std::size_t from = eng.trace.snapshot().size();
    ASSERT_TRUE(eng.trace.wait_for([from](const std::vector<turn_trace::turn>& t) {
      bool seen[3] = {false, false, false};
      for (std::size_t j = from; j < t.size(); ++j)
        if (t[j].session == 1 || t[j].session == 2) seen[t[j].session] = true;
      return seen[1] && seen[2];
    }));
    EXPECT_EQ(first_text(quiet->complete(keystroke("file:///quiet.py", "quiet", "val"), {})), "val_done") << i;
  }
  stop = true;
  for (auto& t : floods) t.join();

  // From each of the quiet session's calls joining the queue to its start,
  // each flooding session started at most one call.
  auto turns = eng.trace.snapshot();
  turns.erase(turns.begin(), turns.begin() + static_cast<std::ptrdiff_t>(mark));
  int served = 0;
  for (std::size_t i = 0; i < turns.size(); ++i) {
    if (turns[i].session != 3 || turns[i].e != event::queued) continue;
    int flood_starts[3] = {0, 0, 0};
    std::size_t j = i + 1;
    for (; j < turns.size() && !(turns[j].session == 3 && turns[j].e == event::started); ++j)
      if (turns[j].e == event::started && turns[j].session <= 2) ++flood_starts[turns[j].session];
    ASSERT_LT(j, turns.size()) << "a call of the quiet session never started";
    EXPECT_LE(flood_starts[1], 1) << "quiet call " << served;
    EXPECT_LE(flood_starts[2], 1) << "quiet call " << served;
    ++served;
  }
  EXPECT_EQ(served, asks);
  // It was a flood: the flooding sessions ran at least as many calls as the
  // quiet one (each ask waited for a turn of each flood, above).
  EXPECT_GE(turn_trace::count(turns, event::started, 1, kind::foreground) +
                turn_trace::count(turns, event::started, 2, kind::foreground),
            static_cast<std::size_t>(asks));
}

TEST(DaemonLoad, a_session_ended_mid_call_frees_the_turn_and_its_buffers_and_the_others_are_answered) {
  traced_engine eng = traced_engine::with_test_double();
  auto victim = eng.session(1);
  auto other = eng.session(2);
  EXPECT_EQ(first_text(victim->complete(keystroke("file:///v/a.py", "a", "abc"), {})), "abc_done");
  EXPECT_EQ(first_text(other->complete(keystroke("file:///o/c.py", "c", "cde"), {})), "cde_done");
  // The victim's next call holds the engine until it is cancelled.
  const std::size_t victim_starts = eng.trace.count_now(event::started, 1, kind::foreground);
  const std::size_t other_queued = eng.trace.count_now(event::queued, 2, kind::foreground);
  cancel_source ended;
  std::future<completion_result> held = std::async(std::launch::async, [&] {
    return victim->complete(keystroke("file:///v/b.py", "BLOCK", "b"), ended.token());
  });
  ASSERT_TRUE(eng.trace.wait_count(event::started, 1, kind::foreground, victim_starts + 1));
  // Another session asks meanwhile and waits for the turn.
  std::future<completion_result> waiting = std::async(
      std::launch::async, [&] { return other->complete(keystroke("file:///o/c.py", "c", "cdef"), {}); });
  ASSERT_TRUE(eng.trace.wait_count(event::queued, 2, kind::foreground, other_queued + 1));
  // The window goes away: its session's scheduler cancels its work
  // (shutdown) and the session's provider goes.
  ended.cancel(cancel_reason::shutdown);
  ASSERT_EQ(held.wait_for(60s), std::future_status::ready);
  EXPECT_TRUE(held.get().items.empty());
  victim.reset();
  ASSERT_EQ(waiting.wait_for(60s), std::future_status::ready);
  EXPECT_EQ(first_text(waiting.get()), "cdef_done");
  // Its buffers (and only its) are closed on the engine.
  std::vector<std::string> closed = eng.watch.closed_keys();
  std::sort(closed.begin(), closed.end());
  EXPECT_EQ(closed, (std::vector<std::string>{"file:///v/a.py#session-1", "file:///v/b.py#session-1"}));
  EXPECT_EQ(eng.pool.sharing(2), 1u);
  // The engine keeps serving the other session and a new one.
  EXPECT_EQ(first_text(other->complete(keystroke("file:///o/c.py", "c", "cdefg"), {})), "cdefg_done");
  auto newcomer = eng.session(3);
  EXPECT_EQ(first_text(newcomer->complete(keystroke("file:///n/d.py", "d", "zz"), {})), "zz_done");
  EXPECT_EQ(eng.pool.sharing(3), 2u);
}

TEST(DaemonLoad, cancelling_one_sessions_calls_leaves_the_others_answers_as_they_are_alone) {
  const std::vector<std::string> tags{"alpha", "bravo"};
  const std::string word = "result_total";
  auto type_word = [&](completion_provider& p, const std::string& tag) {
    std::vector<std::string> answers;
    std::string typed;
    for (char c : word) {
      typed += c;
      completion_result r = p.complete(keystroke("file:///w/" + tag + ".py", tag, typed), {});
      answers.push_back(first_text(r) + (r.incomplete ? " (incomplete)" : ""));
    }
    return answers;
  };
  // Each window alone on an engine of its own.
  std::vector<std::vector<std::string>> alone;
  for (const std::string& tag : tags) {
    traced_engine eng(true, 100us, 0);
    auto s = eng.session(1);
    alone.push_back(type_word(*s, tag));
  }
  // Together on one engine, with a third session whose every call is
  // cancelled while it evaluates (at a point that varies from call to call).
  traced_engine eng(true, 100us, 0);
  auto a = eng.session(1), b = eng.session(2), c = eng.session(3);
  std::atomic<bool> stop{false};
  std::atomic<int> cancelled_calls{0};
  std::thread canceller_session([&] {
    for (int i = 0; !stop; ++i) {
      cancel_source src;
      const std::size_t started = turn_trace::count(eng.trace.snapshot(), event::started, 3, kind::foreground);
      std::thread cancel_it([&, i, started] {
        eng.trace.wait_count(event::started, 3, kind::foreground, started + 1);
        std::this_thread::sleep_for(std::chrono::microseconds(300 * (i % 8)));  // where in the call
        src.cancel(cancel_reason::content_modified);
      });
      c->complete(keystroke("file:///w/charlie.py", "charlie" + std::to_string(i % 3), std::string(i % 5, 'q')),
                  src.token());
      cancel_it.join();
      ++cancelled_calls;
    }
  });
  std::vector<std::vector<std::string>> together(tags.size());
  std::vector<std::thread> windows;
  for (std::size_t w = 0; w < tags.size(); ++w)
    windows.emplace_back([&, w] { together[w] = type_word(w == 0 ? *a : *b, tags[w]); });
  for (auto& t : windows) t.join();
  stop = true;
  canceller_session.join();
  for (std::size_t w = 0; w < tags.size(); ++w) EXPECT_EQ(together[w], alone[w]) << tags[w];
  EXPECT_GT(cancelled_calls.load(), 0);
  // The cancelled session's calls were stopped inside the model's evaluation.
  EXPECT_GT(eng.lm_stats->cancelled_evals, 0);
}

TEST(DaemonLoad, sixteen_sessions_at_once_are_answered_within_the_kv_budget) {
  // 4 KiB a token, 1024-token slots: 4 MiB a slot; cacheMiB 24 holds 6.
  traced_engine eng(true, 0us, 4096);
  completion::completion_settings s = settings();
  s.cache_mib = 24;
  const std::size_t budget = static_cast<std::size_t>(s.cache_mib) << 20;
  // Read under the engine's turn, after every completion of every session.
  std::size_t most_bytes = 0;
  int most_slots = 0, max_slots = 0;
  eng.watch.after_complete = [&] {
    most_bytes = std::max(most_bytes, eng.pipe->pool().bytes());
    most_slots = std::max(most_slots, eng.pipe->pool().n_slots());
    max_slots = eng.pipe->pool().max_slots();
  };
  constexpr int n = 16, rounds = 3;
  std::vector<std::unique_ptr<completion_provider>> windows;
  for (int w = 0; w < n; ++w) windows.push_back(eng.session(w + 1, s));
  std::atomic<int> answered{0};
  std::vector<std::thread> typing;
  for (int w = 0; w < n; ++w)
    typing.emplace_back([&, w] {
      const std::string tag = "win" + std::to_string(w);
      for (int r = 0; r < rounds; ++r) {
        completion_result res =
            windows[w]->complete(keystroke("file:///w/" + tag + ".py", tag, std::string(r + 1, 'x')), {});
        if (!res.items.empty() && !res.incomplete) ++answered;
      }
    });
  for (auto& t : typing) t.join();
  EXPECT_EQ(answered.load(), n * rounds);
  EXPECT_EQ(eng.pool.sharing(1), static_cast<std::size_t>(n));
  EXPECT_EQ(max_slots, 6);
  EXPECT_LE(most_slots, max_slots);
  EXPECT_GT(most_bytes, 0u);
  EXPECT_LE(most_bytes, budget);
}

TEST(DaemonLoad, foreground_calls_go_before_waiting_background_ones_and_preempt_a_running_one) {
  traced_engine eng = traced_engine::with_test_double();
  std::vector<std::unique_ptr<completion_provider>> s;
  for (int i = 1; i <= 5; ++i) s.push_back(eng.session(i));
  // Session 1 holds the engine; two background steps and two requests queue behind it.
  const std::size_t holder_starts = eng.trace.count_now(event::started, 1, kind::foreground);
  cancel_source hold;
  std::future<completion_result> held = std::async(std::launch::async, [&] {
    return s[0]->complete(keystroke("file:///h.py", "BLOCK", "h"), hold.token());
  });
  ASSERT_TRUE(eng.trace.wait_count(event::started, 1, kind::foreground, holder_starts + 1));
  const std::size_t mark = eng.trace.snapshot().size();
  std::vector<std::future<void>> queued;
  for (int i : {2, 3}) {
    queued.push_back(std::async(std::launch::async, [&, i] { s[i - 1]->background_step({}); }));
    ASSERT_TRUE(eng.trace.wait_count(event::queued, i, kind::background, 1));
  }
  for (int i : {4, 5}) {
    const std::size_t before = eng.trace.count_now(event::queued, i, kind::foreground);
    queued.push_back(std::async(std::launch::async, [&, i] {
      EXPECT_EQ(first_text(s[i - 1]->complete(keystroke("file:///f.py", "f", "fg"), {})), "fg_done");
    }));
    ASSERT_TRUE(eng.trace.wait_count(event::queued, i, kind::foreground, before + 1));
  }
  hold.cancel(cancel_reason::content_modified);
  for (auto& f : queued) ASSERT_EQ(f.wait_for(60s), std::future_status::ready);
  held.get();
  std::vector<std::uint64_t> starts;
  std::vector<kind> kinds;
  const auto first_part = eng.trace.snapshot();
  for (auto it = first_part.begin() + static_cast<std::ptrdiff_t>(mark); it != first_part.end(); ++it)
    if (const auto& t = *it; t.e == event::started && t.session >= 2) {
      starts.push_back(t.session);
      kinds.push_back(t.k);
    }
  ASSERT_EQ(starts.size(), 4u);
  EXPECT_EQ(kinds, (std::vector<kind>{kind::foreground, kind::foreground, kind::background, kind::background}));

  // A background step running when a request arrives is cancelled for it.
  eng.watch.hold_background = true;
  std::future<bool> bg = std::async(std::launch::async, [&] { return s[1]->background_step({}); });
  ASSERT_TRUE(eng.trace.wait_count(event::started, 2, kind::background, 2));
  EXPECT_EQ(first_text(s[3]->complete(keystroke("file:///f.py", "f", "now"), {})), "now_done");
  ASSERT_EQ(bg.wait_for(60s), std::future_status::ready);
  bg.get();
  {
    std::lock_guard<std::mutex> lock(eng.watch.mu);
    ASSERT_EQ(eng.watch.background_stops.size(), 1u);
    EXPECT_EQ(eng.watch.background_stops[0], cancel_reason::preempted);
  }
  // The trace: session 4's request queued, session 2's step preempted, then the request ran.
  const auto turns = eng.trace.snapshot();
  std::vector<event> tail;
  for (auto it = turns.rbegin(); it != turns.rend() && tail.size() < 3; ++it)
    if (it->session == 4 || (it->session == 2 && it->e == event::preempted)) tail.insert(tail.begin(), it->e);
  EXPECT_EQ(tail, (std::vector<event>{event::queued, event::preempted, event::started}));
}

// End to end: the real daemon and bridges.

TEST_F(Daemon, AKilledWindowLeavesTheDaemonServingTheOthersAndNewOnes) {
  editor victim, other;
  ASSERT_TRUE(victim.start(dir_));
  ASSERT_TRUE(other.start(dir_));
  other.open("file:///other.py", "def f(x):\n    return x");
  victim.open("file:///v1.py", "import os\nprint(os.");
  victim.open("file:///v2.py", "def g(y):\n    return y");
  ASSERT_TRUE(has_result(victim.complete("file:///v1.py")));
  // Requests in flight, then the window is killed: its socket closes under them.
  for (int i = 0; i < 4; ++i) victim.send_request("textDocument/completion", victim.at_end(i % 2 ? "file:///v1.py" : "file:///v2.py"));
  victim.kill();
  // The daemon ends that session: one session left on the engine.
  json::value st;
  EXPECT_TRUE(wait_for_one_session(other, 60s, st)) << json::serialize(st);
  for (int i = 0; i < 3; ++i) {
    other.type("file:///other.py", " ");
    EXPECT_TRUE(has_result(other.complete("file:///other.py"))) << "completion " << i;
  }
  // A new window is served by the same daemon.
  editor newcomer;
  ASSERT_TRUE(newcomer.start(dir_));
  newcomer.open("file:///new.py", "def h(z):\n    return z");
  EXPECT_TRUE(has_result(newcomer.complete("file:///new.py")));
  st = daemon_status(newcomer);
  ASSERT_TRUE(st.is_object()) << json::serialize(st);
  EXPECT_EQ(st.at("sessions").to_number<std::int64_t>(), 2);
  EXPECT_EQ(st.at("sessionsOnEngine").to_number<std::int64_t>(), 2);
  EXPECT_EQ(daemons_of(dir_).size(), 1u);
  for (editor* e : {&other, &newcomer}) {
    e->shutdown();
    EXPECT_EQ(e->wait_exit(), 0);
  }
}

TEST_F(Daemon, AWindowKilledWhileItsRequestRunsIsCancelledAndForgotten) {
  // The real daemon with the test double as its engine: a "BLOCK" document's
  // completion runs until it is cancelled.
  pid_t daemon = qf::test::spawn_child({QUICKFILL_TEST_DAEMON_BIN, "daemon", "--socket-dir", dir_, "--log-file",
                                        dir_ + "/daemon.log", "--idle-timeout", "600"},
                                       dir_ + "/test-daemon.log");
  ASSERT_GT(daemon, 0);
  ASSERT_TRUE(wait_until([&] { return fs::exists(dir_ + "/daemon.sock"); }, 60s));
  const std::string provider_log = dir_ + "/provider.log";
  auto provider_saw = [&](const std::string& what) {
    return qf::test::file_text(provider_log).find(what) != std::string::npos;
  };
  editor victim, other;
  ASSERT_TRUE(victim.start(dir_));
  ASSERT_TRUE(other.start(dir_));
  ASSERT_EQ(daemons_of(dir_), std::vector<pid_t>{daemon});  // the bridges use the test daemon
  victim.open("file:///v/held.py", "# BLOCK\ndef f(x):\n    return x");
  victim.open("file:///v/plain.py", "def g(y):\n    return y");
  ASSERT_TRUE(has_result(victim.complete("file:///v/plain.py")));
  other.open("file:///o/mine.py", "def h(z):\n    return zed");
  // The victim's request runs (holding the engine's turn); the other window asks meanwhile.
  victim.send_request("textDocument/completion", victim.at_end("file:///v/held.py"));
  ASSERT_TRUE(wait_until([&] { return provider_saw("running file:///v/held.py "); }, 60s));
  const std::int64_t waiting = other.send_request("textDocument/completion", other.at_end("file:///o/mine.py"));
  victim.kill();
  // The daemon cancels the killed session's call: the other window's request
  // is answered long before the held call would give up by itself (60 s).
  auto answer = other.response(waiting, 30s);
  ASSERT_TRUE(has_result(answer)) << (answer ? json::serialize(*answer) : "no answer within 30 s");
  EXPECT_NE(json::serialize(*answer).find("zed_done"), std::string::npos) << json::serialize(*answer);
  // Its documents are forgotten on the engine, and the session is gone.
  EXPECT_TRUE(wait_until([&] { return provider_saw("closed file:///v/held.py#session-") &&
                                      provider_saw("closed file:///v/plain.py#session-"); },
                         60s))
      << qf::test::file_text(provider_log);
  EXPECT_FALSE(provider_saw("closed file:///o/mine.py#session-"));
  json::value st;
  EXPECT_TRUE(wait_for_one_session(other, 60s, st)) << json::serialize(st);
  // The daemon keeps serving the other window and a new one.
  other.type("file:///o/mine.py", "x");
  EXPECT_TRUE(has_result(other.complete("file:///o/mine.py")));
  editor newcomer;
  ASSERT_TRUE(newcomer.start(dir_));
  newcomer.open("file:///n/new.py", "def k(w):\n    return wow");
  auto r = newcomer.complete("file:///n/new.py");
  ASSERT_TRUE(has_result(r));
  EXPECT_NE(json::serialize(*r).find("wow_done"), std::string::npos) << json::serialize(*r);
  for (editor* e : {&other, &newcomer}) {
    e->shutdown();
    EXPECT_EQ(e->wait_exit(), 0);
  }
  qf::test::stop_child(daemon, SIGTERM);
}

TEST_F(Daemon, SixteenWindowsAtOnceAreAllAnswered) {
  constexpr int n = 16;
  std::vector<std::unique_ptr<editor>> eds(n);
  for (auto& e : eds) {
    e = std::make_unique<editor>();
    ASSERT_TRUE(e->start(dir_));
  }
  ASSERT_EQ(daemons_of(dir_).size(), 1u);
  std::atomic<int> answered{0};
  std::vector<std::thread> typing;
  for (int i = 0; i < n; ++i)
    typing.emplace_back([&, i] {
      editor& e = *eds[i];
      const std::string uri = "file:///w" + std::to_string(i) + ".py";
      e.open(uri, "def add" + std::to_string(i) + "(a, b):\n    return ");
      for (int k = 0; k < 2; ++k) {
        e.type(uri, k ? "b" : "a + ");
        if (has_result(e.complete(uri))) ++answered;
      }
    });
  for (auto& t : typing) t.join();
  EXPECT_EQ(answered.load(), 2 * n);
  const json::value st = daemon_status(*eds[0]);
  ASSERT_TRUE(st.is_object()) << json::serialize(st);
  EXPECT_EQ(st.at("sessions").to_number<std::int64_t>(), n);
  EXPECT_EQ(st.at("engines").to_number<std::int64_t>(), 1);
  EXPECT_EQ(st.at("sessionsOnEngine").to_number<std::int64_t>(), n);
  for (auto& e : eds) e->shutdown();
  for (auto& e : eds) EXPECT_EQ(e->wait_exit(), 0);
}
