// The daemon under load: several sessions on one shared engine at once,
// each with its own pipeline, their evals' order read from the engine's step
// observer (step_loop.h: which entries of which sessions each step ran).
// * A session whose prompt waits for a step is passed over for a flooding
//   session's prompt rows at most once per flooding session (least recently
//   served first).
// * A session that ends mid-call (its window killed) lets the step it held
//   finish, its KV sequences are freed on the engine, the others keep being
//   answered; end to end, a bridge killed while its request holds the engine
//   of the real daemon (quickfill_test_daemon: the scripted model as its
//   engine) has that call cancelled and its sequences freed, the other
//   window's waiting request is answered and a new window served; and a
//   bridge killed with requests in flight on the real model leaves the
//   daemon serving the others and new ones, the killed session gone from its
//   count.
// * A session whose calls are cancelled mid-evaluation leaves the other
//   sessions' answers exactly as they are when each runs alone.
// * 16 sessions at once are all answered and their KV sequences together
//   stay within completion.cacheMiB; end to end, 16 bridges on one daemon are
//   all answered.
// * A request's prompt rows go before background work in every step, and
//   each call's evaluations carry its kind as their priority (an automatic
//   completion a keystroke, an invoked one an explicit request, background
//   work background).
// The engine is the scripted model of the pipeline tests behind the real
// engine_pool, step loop and pipelines (scripted_engine.h: "BLOCK" holds an
// eval until it is cancelled); the end-to-end tests run the real quickfill
// binary (daemon_editor.h). Every wait is on a condition, with a generous
// limit; nothing asserts a duration.
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
#include "tests/server/daemon/daemon_editor.h"
#include "tests/server/daemon/pool_requests.h"
#include "tests/server/daemon/scripted_engine.h"
#include "tests/server_process.h"

using qf::cancel_reason;
using qf::cancel_source;
using qf::cancel_token;
using qf::server::completion::step_priority;
using qf::server::completion::step_trace_entry;
using qf::server::daemon::engine_pool;
using namespace qf::daemon_test;

namespace {

using step = std::vector<step_trace_entry>;

// The engine's steps in the order they ran.
class step_trace {
 public:
  qf::server::completion::step_loop::step_observer observer() {
    return [this](const step& s) {
      {
        std::lock_guard<std::mutex> lock(mu_);
        steps_.push_back(s);
      }
      cv_.notify_all();
    };
  }
  std::vector<step> snapshot() const {
    std::lock_guard<std::mutex> lock(mu_);
    return steps_;
  }
  // Waits until `cond` holds for the steps so far.
  bool wait_for(const std::function<bool(const std::vector<step>&)>& cond, std::chrono::milliseconds limit = 60s) {
    std::unique_lock<std::mutex> lock(mu_);
    return cv_.wait_for(lock, limit, [&] { return cond(steps_); });
  }
  // Steps that ran rows of `owner`.
  static std::size_t steps_of(const std::vector<step>& steps, std::uint64_t owner) {
    return static_cast<std::size_t>(std::count_if(steps.begin(), steps.end(), [&](const step& s) {
      return std::any_of(s.begin(), s.end(), [&](const step_trace_entry& e) { return e.owner == owner; });
    }));
  }
  bool wait_steps_of(std::uint64_t owner, std::size_t n) {
    return wait_for([&](const std::vector<step>& s) { return steps_of(s, owner) >= n; });
  }

 private:
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::vector<step> steps_;
};

// One shared engine whose steps are traced: the scripted model (`per_token`:
// its speed) behind the pool, each session's real pipeline kept (in the
// order the sessions were made) for the tests to look into once its calls
// have returned.
struct traced_engine {
  step_trace trace;
  std::shared_ptr<scripted_engine> model = std::make_shared<scripted_engine>();
  std::mutex mu;
  std::vector<qf::server::completion::pipeline*> pipes;
  engine_pool pool;

  traced_engine(std::chrono::microseconds per_token, std::size_t bytes_per_token,
                qf::server::completion::step_loop_options so = {})
      : pool(loaders(), so) {
    model->model().per_token = per_token;
    if (bytes_per_token) model->model().bytes_per_token = bytes_per_token;
    pool.observe_steps(trace.observer());
  }
  qf::server::daemon::engine_loaders loaders() {
    qf::server::daemon::engine_loaders l;
    l.load_backend = [this](const provider_options&, std::string*) -> std::shared_ptr<lm_backend> { return model; };
    l.make_provider = [this](std::unique_ptr<lm_backend> view, const provider_options& o,
                             std::string*) -> std::unique_ptr<completion_provider> {
      auto p = std::make_unique<qf::server::completion::pipeline>(std::move(view), o.completion);
      std::lock_guard<std::mutex> lock(mu);
      pipes.push_back(p.get());
      return p;
    };
    return l;
  }
  std::unique_ptr<completion_provider> session(std::uint64_t id,
                                               const completion::completion_settings& s = settings()) {
    return acquire_session(pool, id, s);
  }
};

std::string first_text(const completion_result& r) { return r.items.empty() ? "" : r.items[0].insert_text; }

bool prompt_rows(const step_trace_entry& e) { return e.rows > 2; }  // more than a decode entry's (decode_rows)

}  // namespace

TEST(DaemonLoad, a_waiting_prompt_is_passed_over_for_each_flooding_session_at_most_once) {
  // Small steps (8 prompt rows): every cold prompt takes dozens of them.
  traced_engine eng(20us, 0, {2, 8});
  auto flood1 = eng.session(1), flood2 = eng.session(2), quiet = eng.session(3);
  std::atomic<bool> stop{false};
  std::vector<std::thread> floods;
  for (auto* p : {flood1.get(), flood2.get()})
    floods.emplace_back([&stop, p] {
      // A cold prompt each call: another file head every time.
      for (int i = 0; !stop; ++i) p->complete(keystroke("file:///flood.py", "flood" + std::to_string(i), "x"), {});
    });
  ASSERT_TRUE(eng.trace.wait_steps_of(1, 20));
  ASSERT_TRUE(eng.trace.wait_steps_of(2, 20));
  const std::size_t mark = eng.trace.snapshot().size();
  constexpr int asks = 10;
  for (int i = 0; i < asks; ++i) {
    completion_result r = quiet->complete(keystroke("file:///quiet.py", "quiet" + std::to_string(i), "x"), {});
    EXPECT_FALSE(r.items.empty()) << i;
    EXPECT_FALSE(r.incomplete) << i;
  }
  stop = true;
  for (auto& t : floods) t.join();

  // Between two steps that ran rows of the same prompt of the quiet session
  // (the first cut it), each flooding session's prompt rows ran in at most
  // one step.
  auto steps = eng.trace.snapshot();
  steps.erase(steps.begin(), steps.begin() + static_cast<std::ptrdiff_t>(mark));
  int cuts = 0, contended = 0;
  std::ptrdiff_t last = -1;  // the last step with a cut entry of the quiet session
  for (std::size_t k = 0; k < steps.size(); ++k) {
    const auto quiet_entry = std::find_if(steps[k].begin(), steps[k].end(),
                                          [](const step_trace_entry& e) { return e.owner == 3; });
    if (quiet_entry == steps[k].end()) continue;
    if (last >= 0) {
      int flood_steps[3] = {0, 0, 0};
      for (std::size_t j = static_cast<std::size_t>(last) + 1; j < k; ++j) {
        bool ran[3] = {false, false, false};
        for (const step_trace_entry& e : steps[j])
          if (e.owner <= 2 && prompt_rows(e)) ran[e.owner] = true;
        for (int f = 1; f <= 2; ++f) flood_steps[f] += ran[f] ? 1 : 0;
      }
      EXPECT_LE(flood_steps[1], 1) << "step " << k;
      EXPECT_LE(flood_steps[2], 1) << "step " << k;
      if (flood_steps[1] + flood_steps[2] > 0) ++contended;
    }
    last = quiet_entry->finished ? -1 : static_cast<std::ptrdiff_t>(k);
    if (!quiet_entry->finished) ++cuts;
  }
  // It was a flood: the quiet prompts were cut, and waited while the floods' rows ran.
  EXPECT_GE(cuts, asks);
  EXPECT_GT(contended, 0);
}

TEST(DaemonLoad, a_session_ended_mid_call_frees_its_sequences_and_the_others_are_answered) {
  traced_engine eng(0us, 0);
  auto victim = eng.session(1);
  auto other = eng.session(2);
  EXPECT_FALSE(other->complete(keystroke("file:///o/c.py", "c", "cde"), {}).items.empty());
  const int others = eng.model->live();  // the other session's sequences
  EXPECT_FALSE(victim->complete(keystroke("file:///v/a.py", "a", "abc"), {}).items.empty());
  EXPECT_GT(eng.model->live(), others);
  // The victim's next call holds the engine's step until it is cancelled.
  std::atomic<bool> holding{false};
  eng.model->say = [&](const std::string& what) {
    if (what == "holding") holding = true;
  };
  cancel_source ended;
  std::future<completion_result> held = std::async(std::launch::async, [&] {
    return victim->complete(keystroke("file:///v/b.py", "BLOCK", "b"), ended.token());
  });
  ASSERT_TRUE(wait_until([&] { return holding.load(); }, 60s));
  // Another session asks meanwhile.
  std::future<completion_result> waiting = std::async(
      std::launch::async, [&] { return other->complete(keystroke("file:///o/c.py", "c", "cdef"), {}); });
  // The window goes away: its session's scheduler cancels its work
  // (shutdown) and the session's provider goes.
  ended.cancel(cancel_reason::shutdown);
  ASSERT_EQ(held.wait_for(60s), std::future_status::ready);
  EXPECT_TRUE(held.get().items.empty());
  victim.reset();
  ASSERT_EQ(waiting.wait_for(60s), std::future_status::ready);
  const completion_result answer = waiting.get();
  EXPECT_FALSE(answer.items.empty());
  EXPECT_FALSE(answer.incomplete);
  // Its sequences (and only its) are freed on the engine.
  eng.model->say = nullptr;
  EXPECT_EQ(eng.model->live(), others);
  EXPECT_EQ(eng.pool.sharing(2), 1u);
  // The engine keeps serving the other session and a new one.
  EXPECT_FALSE(other->complete(keystroke("file:///o/c.py", "c", "cdefg"), {}).items.empty());
  auto newcomer = eng.session(3);
  EXPECT_FALSE(newcomer->complete(keystroke("file:///n/d.py", "d", "zz"), {}).items.empty());
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
    traced_engine eng(100us, 0);
    auto s = eng.session(1);
    alone.push_back(type_word(*s, tag));
  }
  // Together on one engine, with a third session whose every call is
  // cancelled while it evaluates (at a point that varies from call to call).
  traced_engine eng(100us, 0);
  auto a = eng.session(1), b = eng.session(2), c = eng.session(3);
  std::atomic<bool> stop{false};
  std::atomic<int> cancelled_calls{0};
  std::thread canceller_session([&] {
    for (int i = 0; !stop; ++i) {
      cancel_source src;
      const std::size_t ran = step_trace::steps_of(eng.trace.snapshot(), 3);
      std::thread cancel_it([&, i, ran] {
        eng.trace.wait_steps_of(3, ran + 1);
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
  EXPECT_GT(eng.model->model().stats->cancelled_evals, 0);
}

TEST(DaemonLoad, sixteen_sessions_at_once_are_answered_within_the_kv_budget) {
  // 4 KiB a token, 1024-token slots: 4 MiB a slot; cacheMiB 96 holds 24,
  // one for each of 16 sessions (not cacheSlots, 3, each).
  traced_engine eng(0us, 4096);
  completion::completion_settings s = settings();
  s.cache_mib = 96;
  const std::size_t budget = static_cast<std::size_t>(s.cache_mib) << 20;
  constexpr int n = 16, rounds = 2, files = 3;
  std::vector<std::unique_ptr<completion_provider>> windows;
  for (int w = 0; w < n; ++w) windows.push_back(eng.session(w + 1, s));
  std::atomic<int> answered{0};
  std::vector<std::thread> typing;
  for (int w = 0; w < n; ++w)
    typing.emplace_back([&, w] {
      for (int r = 0; r < rounds; ++r)
        for (int f = 0; f < files; ++f) {
          const std::string tag = "win" + std::to_string(w) + "f" + std::to_string(f);
          completion_result res =
              windows[w]->complete(keystroke("file:///w/" + tag + ".py", tag, std::string(r + 1, 'x')), {});
          if (!res.items.empty() && !res.incomplete) ++answered;
        }
    });
  for (auto& t : typing) t.join();
  EXPECT_EQ(answered.load(), n * rounds * files);
  EXPECT_EQ(eng.pool.sharing(1), static_cast<std::size_t>(n));
  // At no time did the engine hold more sequences than the budget has room for.
  EXPECT_GT(eng.model->most_live(), 0);
  EXPECT_LE(static_cast<std::size_t>(eng.model->most_live()) * (std::size_t{4} << 20), budget);
  std::size_t bytes = 0;
  for (auto* p : eng.pipes) {
    EXPECT_EQ(p->pool().max_slots(), 1);
    bytes += p->pool().bytes();
  }
  EXPECT_LE(bytes, budget);
}

TEST(DaemonLoad, a_requests_prompt_rows_go_before_background_work_in_every_step) {
  // Small steps (8 prompt rows), a slow model: a prompt takes dozens of steps.
  traced_engine eng(1000us, 0, {2, 8});
  auto a = eng.session(1), b = eng.session(2);
  // A's request is cancelled before its prompt is evaluated: finishing that
  // prompt is left to A's background work.
  cancel_source gone;
  gone.cancel(cancel_reason::content_modified);
  a->complete(keystroke("file:///w/a.py", "a", "x"), gone.token());
  ASSERT_GT(eng.pipes[0]->pending_background(), 0u);
  auto background = std::async(std::launch::async, [&] {
    while (a->background_step({})) {
    }
  });
  ASSERT_TRUE(eng.trace.wait_steps_of(1, 3));  // under way
  const std::size_t mark = eng.trace.snapshot().size();
  EXPECT_FALSE(b->complete(keystroke("file:///w/b.py", "b", "y"), {}).items.empty());
  ASSERT_EQ(background.wait_for(60s), std::future_status::ready);
  const auto steps = eng.trace.snapshot();
  // In no step did background rows run beside a request's cut prompt (the
  // step's prompt rows went to the request first); each ran at its priority.
  int cut = 0;
  for (std::size_t k = mark; k < steps.size(); ++k) {
    bool b_cut = false, a_ran = false;
    for (const step_trace_entry& e : steps[k]) {
      if (e.owner == 2) {
        EXPECT_EQ(e.priority, step_priority::explicit_request);
        b_cut = b_cut || !e.finished;
      }
      if (e.owner == 1) {
        EXPECT_EQ(e.priority, step_priority::background);
        a_ran = true;
      }
    }
    if (b_cut) ++cut;
    EXPECT_FALSE(b_cut && a_ran) << "step " << k;
  }
  EXPECT_GT(cut, 0);
  // A's background work went on after B's request (it was under way throughout).
  std::size_t last_b = mark;
  for (std::size_t k = mark; k < steps.size(); ++k)
    for (const step_trace_entry& e : steps[k])
      if (e.owner == 2) last_b = k;
  EXPECT_TRUE(std::any_of(steps.begin() + static_cast<std::ptrdiff_t>(last_b), steps.end(), [](const step& s) {
    return std::any_of(s.begin(), s.end(), [](const step_trace_entry& e) { return e.owner == 1; });
  }));
}

TEST(DaemonLoad, each_calls_evaluations_carry_its_kind_as_their_priority) {
  traced_engine eng(0us, 0);
  auto s = eng.session(1);
  auto priorities_since = [&](std::size_t mark) {
    std::vector<step_priority> seen;
    const auto steps = eng.trace.snapshot();
    for (std::size_t k = mark; k < steps.size(); ++k)
      for (const step_trace_entry& e : steps[k])
        if (std::find(seen.begin(), seen.end(), e.priority) == seen.end()) seen.push_back(e.priority);
    return seen;
  };
  // An automatic completion: a keystroke.
  std::size_t mark = eng.trace.snapshot().size();
  completion_request automatic = keystroke("file:///w/a.py", "a", "x");
  automatic.explicit_trigger = false;
  s->complete(automatic, {});
  EXPECT_EQ(priorities_since(mark), std::vector<step_priority>{step_priority::keystroke});
  // An invoked one: an explicit request; cancelled before its prompt, it leaves the prompt to background work.
  mark = eng.trace.snapshot().size();
  EXPECT_FALSE(s->complete(keystroke("file:///w/b.py", "b", "x"), {}).items.empty());
  EXPECT_EQ(priorities_since(mark), std::vector<step_priority>{step_priority::explicit_request});
  cancel_source gone;
  gone.cancel(cancel_reason::content_modified);
  s->complete(keystroke("file:///w/c.py", "c", "x"), gone.token());
  ASSERT_GT(eng.pipes[0]->pending_background(), 0u);
  mark = eng.trace.snapshot().size();
  while (s->background_step({})) {
  }
  EXPECT_EQ(priorities_since(mark), std::vector<step_priority>{step_priority::background});
}

TEST(DaemonLoad, a_sessions_load_plan_is_its_pipelines_estimate_on_the_shared_engine) {
  // What explainCompletion and routes.underLoad read: the session's own
  // pipeline plans on the shared engine (a session that did not pass it on
  // would plan nothing, and rerouting under load would never happen).
  traced_engine eng(0us, 0);
  auto s = eng.session(1);
  completion_request r = keystroke("file:///w/a.py", "a", "x");
  r.explicit_trigger = false;
  r.deadline = qf::server::clock::now() + 10s;
  const std::optional<qf::server::load_explanation> plan = s->load_plan(r);
  ASSERT_TRUE(plan.has_value());
  EXPECT_EQ(plan->trigger, "automatic");
  EXPECT_GT(plan->prompt_rows, 0);
  EXPECT_FALSE(plan->over_budget);
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
  // The real daemon with the scripted model as its engine: a "BLOCK"
  // document's evaluation holds its step until it is cancelled.
  pid_t daemon = qf::test::spawn_child({QUICKFILL_TEST_DAEMON_BIN, "daemon", "--socket-dir", dir_, "--log-file",
                                        dir_ + "/daemon.log", "--idle-timeout", "600"},
                                       dir_ + "/test-daemon.log");
  ASSERT_GT(daemon, 0);
  ASSERT_TRUE(wait_until([&] { return fs::exists(dir_ + "/daemon.sock"); }, 60s));
  const std::string engine_log = dir_ + "/provider.log";
  auto engine_lines = [&](const std::string& prefix) {
    std::size_t n = 0;
    const std::string text = qf::test::file_text(engine_log);
    for (std::size_t at = 0; (at = text.find(prefix, at)) != std::string::npos; at += prefix.size())
      if (at == 0 || text[at - 1] == '\n') ++n;
    return n;
  };
  editor victim, other;
  ASSERT_TRUE(victim.start(dir_));
  ASSERT_TRUE(other.start(dir_));
  ASSERT_EQ(daemons_of(dir_), std::vector<pid_t>{daemon});  // the bridges use the test daemon
  victim.open("file:///v/plain.py", "def g(y):\n    return y");
  ASSERT_TRUE(has_result(victim.complete("file:///v/plain.py")));
  victim.open("file:///v/held.py", "# BLOCK\ndef f(x):\n    return x");
  other.open("file:///o/mine.py", "def h(z):\n    return zed");
  // The victim's request holds the engine's step; the other window asks meanwhile.
  victim.send_request("textDocument/completion", victim.at_end("file:///v/held.py"));
  ASSERT_TRUE(wait_until([&] { return engine_lines("holding") > 0; }, 60s));
  const std::size_t freed = engine_lines("freed ");
  const std::int64_t waiting = other.send_request("textDocument/completion", other.at_end("file:///o/mine.py"));
  victim.kill();
  // The daemon cancels the killed session's call: the other window's request
  // is answered long before the held eval would give up by itself (60 s).
  auto answer = other.response(waiting, 30s);
  ASSERT_TRUE(has_result(answer)) << (answer ? json::serialize(*answer) : "no answer within 30 s");
  // Its KV sequences (one slot for each of its two documents) are freed on
  // the engine, and the session is gone.
  EXPECT_TRUE(wait_until([&] { return engine_lines("freed ") >= freed + 2; }, 60s)) << qf::test::file_text(engine_log);
  json::value st;
  EXPECT_TRUE(wait_for_one_session(other, 60s, st)) << json::serialize(st);
  // The daemon keeps serving the other window and a new one.
  other.type("file:///o/mine.py", "x");
  EXPECT_TRUE(has_result(other.complete("file:///o/mine.py")));
  editor newcomer;
  ASSERT_TRUE(newcomer.start(dir_));
  newcomer.open("file:///n/new.py", "def k(w):\n    return wow");
  EXPECT_TRUE(has_result(newcomer.complete("file:///n/new.py")));
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
