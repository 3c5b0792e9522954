// The daemon's shared engine with several editor sessions on it: each
// session's own real completion pipeline (on the scripted model of the
// pipeline tests) over its view of one step loop, made by engine_pool as the
// daemon makes them. Each window typing in its own buffers keeps its KV state
// however many windows type at once; two windows holding the same URI with
// different contents do not meet; the windows' KV slots together stay within
// completion.cacheMiB; one window's long prompt does not hold another's
// keystroke until it is done (their evals share steps); a request whose
// deadline passes while its evals wait is answered then (empty, incomplete);
// and sessions with a draft model configured share one copy of it.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <future>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "server/completion/pipeline/pipeline.h"
#include "server/daemon/engine_pool.h"
#include "tests/server/daemon/pool_requests.h"
#include "tests/server/daemon/scripted_engine.h"

using namespace qf::server;
using qf::daemon_test::scripted_engine;
using qf::server::daemon::engine_pool;

namespace {

// One model, shared by the pool's sessions; each session's pipeline is kept
// (in the order the sessions were made) for the tests to look into between calls.
struct shared_engine {
  std::shared_ptr<scripted_engine> model = std::make_shared<scripted_engine>();
  std::mutex mu;
  std::vector<completion::pipeline*> pipes;
  std::vector<std::vector<completion::step_trace_entry>> steps;
  engine_pool pool;
  explicit shared_engine(size_t bytes_per_token = 64, std::chrono::microseconds per_token = {},
                         completion::step_loop_options so = {})
      : pool(loaders(), so) {
    model->model().bytes_per_token = bytes_per_token;
    model->model().per_token = per_token;
    pool.observe_steps([this](const std::vector<completion::step_trace_entry>& step) {
      std::lock_guard<std::mutex> lock(mu);
      steps.push_back(step);
    });
  }
  daemon::engine_loaders loaders() {
    daemon::engine_loaders l;
    l.load_backend = [this](const provider_options&, std::string*) -> std::shared_ptr<completion::lm_backend> {
      return model;
    };
    l.make_provider = [this](std::unique_ptr<completion::lm_backend> view, const provider_options& o,
                             std::string*) -> std::unique_ptr<completion_provider> {
      auto p = std::make_unique<completion::pipeline>(std::move(view), o.completion);
      std::lock_guard<std::mutex> lock(mu);
      pipes.push_back(p.get());
      return p;
    };
    return l;
  }
  std::unique_ptr<completion_provider> session(std::uint64_t id, const completion::completion_settings& s) {
    return acquire_session(pool, id, s);
  }
};

}  // namespace

TEST(engine_pool_sessions, four_windows_typing_at_once_keep_their_caches) {
  shared_engine eng;
  const std::vector<std::string> tags{"alpha", "bravo", "charlie", "delta"};
  std::vector<std::unique_ptr<completion_provider>> windows;
  for (size_t w = 0; w < tags.size(); ++w) windows.push_back(eng.session(w + 1, settings()));
  ASSERT_EQ(eng.pool.engines(), 1u);
  ASSERT_EQ(eng.pipes.size(), tags.size());
  // Each window types a word, all at once: the first request of each
  // evaluates its prompt, every keystroke after it continues its own cache.
  std::vector<std::thread> typing;
  std::vector<std::vector<std::string>> failures(tags.size());
  for (size_t w = 0; w < tags.size(); ++w)
    typing.emplace_back([&, w] {
      const std::string uri = "file:///w/" + tags[w] + ".py";
      std::string typed;
      completion_result first = windows[w]->complete(keystroke(uri, tags[w], typed), {});
      if (first.metrics.tokens_evaluated <= 100) failures[w].push_back("the first prompt was not evaluated");
      for (char c : std::string("result")) {
        typed += c;
        completion_result r = windows[w]->complete(keystroke(uri, tags[w], typed), {});
        if (!r.metrics.cache_hit || r.metrics.tokens_reused <= 100 || r.metrics.tokens_evaluated > 4)
          failures[w].push_back("after " + typed + ": reused " + std::to_string(r.metrics.tokens_reused) +
                                ", evaluated " + std::to_string(r.metrics.tokens_evaluated));
        if (r.items.empty()) failures[w].push_back("after " + typed + ": no answer");
      }
    });
  for (auto& t : typing) t.join();
  for (size_t w = 0; w < tags.size(); ++w) EXPECT_EQ(failures[w], std::vector<std::string>{}) << tags[w];
  // cacheSlots counts per window (the budget holds them all).
  for (completion::pipeline* p : eng.pipes) EXPECT_EQ(p->pool().max_slots(), 3);
}

TEST(engine_pool_sessions, the_same_uri_with_different_contents_in_two_windows_are_two_buffers) {
  shared_engine eng;
  auto a = eng.session(1, settings());
  auto b = eng.session(2, settings());
  const std::string uri = "file:///w/shared.py";
  // Two windows on the same file, each with its own unsaved edits above the cursor.
  std::string ta, tb;
  EXPECT_GT(a->complete(keystroke(uri, "mine", ta), {}).metrics.tokens_evaluated, 100);
  EXPECT_GT(b->complete(keystroke(uri, "yours", tb), {}).metrics.tokens_evaluated, 100);
  for (char c : std::string("values")) {
    ta += c;
    tb += c;
    completion_result ra = a->complete(keystroke(uri, "mine", ta), {});
    completion_result rb = b->complete(keystroke(uri, "yours", tb), {});
    EXPECT_LE(ra.metrics.tokens_evaluated, 4) << "window a, after " << ta;
    EXPECT_LE(rb.metrics.tokens_evaluated, 4) << "window b, after " << tb;
  }
  // One window closing the file leaves the other's buffer warm.
  a->document_closed(uri);
  tb += 's';
  EXPECT_LE(b->complete(keystroke(uri, "yours", tb), {}).metrics.tokens_evaluated, 4);
  // The explanation is of the window's own buffer: its own text, its own URI.
  std::optional<prompt_explanation> ex = b->explain(keystroke(uri, "yours", tb));
  ASSERT_TRUE(ex);
  EXPECT_NE(ex->text.find("yours"), std::string::npos);
  EXPECT_EQ(ex->text.find("mine"), std::string::npos);
}

TEST(engine_pool_sessions, a_second_window_on_a_file_evaluates_only_what_follows_the_head_another_computed) {
  const std::string uri = "file:///w/shared.py";
  // The third window's request in an engine of its own: its whole prompt.
  int64_t whole = 0;
  {
    shared_engine alone;
    auto w = alone.session(1, settings());
    completion_result r = w->complete(keystroke(uri, "same", "total += 1"), {});
    EXPECT_EQ(r.metrics.tokens_reused, 0);
    whole = r.metrics.tokens_evaluated;
  }
  ASSERT_GT(whole, 100);
  shared_engine eng;
  auto a = eng.session(1, settings());
  auto b = eng.session(2, settings());
  auto c = eng.session(3, settings());
  completion_result ra = a->complete(keystroke(uri, "same", ""), {});
  EXPECT_GT(ra.metrics.tokens_evaluated, 100);
  EXPECT_EQ(ra.metrics.tokens_reused, 0);
  // The same file, the same cursor, in another window: its slots hold
  // nothing, and every prompt token but the last is copied from a's.
  const int64_t copies = eng.model->model().stats->copies;
  completion_result rb = b->complete(keystroke(uri, "same", ""), {});
  EXPECT_EQ(rb.metrics.tokens_evaluated, 1);
  EXPECT_EQ(rb.metrics.tokens_reused, ra.metrics.tokens_evaluated - 1);
  EXPECT_GT(eng.model->model().stats->copies, copies);
  // A third window typing on the cursor line: the head up to it is copied,
  // only the rest of its prompt is evaluated.
  completion_result rc = c->complete(keystroke(uri, "same", "total += 1"), {});
  EXPECT_EQ(rc.metrics.tokens_reused + rc.metrics.tokens_evaluated, whole);
  EXPECT_GT(rc.metrics.tokens_reused, 100);
  EXPECT_LT(rc.metrics.tokens_evaluated, 40);
  // Each keeps its own copy: a window gone, the others' caches stay warm.
  a.reset();
  EXPECT_LE(b->complete(keystroke(uri, "same", "t"), {}).metrics.tokens_evaluated, 4);
  EXPECT_LE(c->complete(keystroke(uri, "same", "total += 12"), {}).metrics.tokens_evaluated, 4);
}

TEST(engine_pool_sessions, sixteen_windows_share_the_memory_budget) {
  // 4 KiB a token, 1024-token slots: 4 MiB a slot; cacheMiB 96 holds 24
  // slots, fewer than 16 windows x 3 (cacheSlots) but one each.
  shared_engine eng(4096);
  completion::completion_settings s = settings();
  s.cache_mib = 96;
  const size_t budget = static_cast<size_t>(s.cache_mib) << 20;
  constexpr int n = 16;
  std::vector<std::unique_ptr<completion_provider>> windows;
  for (int w = 0; w < n; ++w) windows.push_back(eng.session(w + 1, s));
  // Each window works on three files (three slots' worth alone).
  auto ask = [&](int w, int file, const std::string& typed) {
    const std::string tag = "win" + std::to_string(w) + "f" + std::to_string(file);
    return windows[w]->complete(keystroke("file:///w/" + tag + ".py", tag, typed), {});
  };
  for (int round = 0; round < 2; ++round)
    for (int w = 0; w < n; ++w)
      for (int f = 0; f < 3; ++f) {
        completion_result r = ask(w, f, std::string(round, 'x'));
        EXPECT_FALSE(r.items.empty()) << w << " " << f;
      }
  size_t bytes = 0;
  for (completion::pipeline* p : eng.pipes) {
    EXPECT_EQ(p->pool().max_slots(), 1);
    EXPECT_LE(p->pool().n_slots(), 1);
    bytes += p->pool().bytes();
  }
  EXPECT_LE(bytes, budget);
  EXPECT_LE(static_cast<size_t>(eng.model->most_live()) * (size_t{4} << 20), budget);
  // Half the windows close: the others' share grows back to cacheSlots (24 / 8).
  windows.resize(n / 2);
  eng.pipes.resize(n / 2);
  for (int w = 0; w < n / 2; ++w) ask(w, 0, "y");
  for (completion::pipeline* p : eng.pipes) EXPECT_EQ(p->pool().max_slots(), 3);
}

TEST(engine_pool_sessions, one_windows_long_prompt_does_not_hold_another_windows_keystroke) {
  // Slow evaluation, small steps: a cold prompt of a few hundred tokens takes
  // dozens of steps; a keystroke's few rows join the steps as they come.
  shared_engine eng(64, std::chrono::milliseconds(2), {2, 8});
  auto a = eng.session(1, settings()), b = eng.session(2, settings());
  // B's buffer is warm.
  ASSERT_FALSE(b->complete(keystroke("file:///w/b.py", "b", "to"), {}).items.empty());
  std::atomic<bool> a_done{false};
  auto cold = std::async(std::launch::async, [&] {
    completion_result r = a->complete(keystroke("file:///w/a.py", "a", "x"), {});
    a_done = true;
    return r;
  });
  // A's prompt is under way (its rows have run in a step) when B types.
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  auto a_ran = [&] {
    std::lock_guard<std::mutex> lock(eng.mu);
    for (const auto& step : eng.steps)
      for (const auto& e : step)
        if (e.owner == 1) return true;
    return false;
  };
  while (!a_ran() && std::chrono::steady_clock::now() < give_up) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  ASSERT_TRUE(a_ran());
  const completion_result r = b->complete(keystroke("file:///w/b.py", "b", "tot"), {});
  EXPECT_FALSE(a_done) << "B was answered only after A's prompt";
  EXPECT_FALSE(r.items.empty());
  EXPECT_FALSE(r.incomplete);
  EXPECT_LE(r.metrics.tokens_evaluated, 4);
  EXPECT_FALSE(cold.get().items.empty());  // A itself is answered as usual
  // B's rows ran in steps beside A's: one engine batch of both.
  bool shared = false;
  for (const auto& step : eng.steps) {
    const bool has_a = std::any_of(step.begin(), step.end(), [](const auto& e) { return e.owner == 1; });
    const bool has_b = std::any_of(step.begin(), step.end(), [](const auto& e) { return e.owner == 2; });
    shared = shared || (has_a && has_b);
  }
  EXPECT_TRUE(shared);
}

TEST(engine_pool_sessions, a_request_past_its_deadline_while_waiting_is_answered_at_once) {
  // A cold prompt of a few hundred tokens: about a second, in steps of 64 rows.
  shared_engine eng(64, std::chrono::milliseconds(4));
  auto a = eng.session(1, settings()), b = eng.session(2, settings());
  std::atomic<bool> a_done{false};
  auto first = std::async(std::launch::async, [&] {
    completion_result r = a->complete(keystroke("file:///w/a.py", "a", "x"), {});
    a_done = true;
    return r;
  });
  // A's steps hold the engine for about a second; B asks with a short budget meanwhile.
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  completion_request rb = keystroke("file:///w/b.py", "b", "y");
  rb.deadline = clock::now() + std::chrono::milliseconds(30);
  const completion_result r = b->complete(rb, {});
  EXPECT_FALSE(a_done) << "B was answered only after A's call";
  EXPECT_TRUE(r.incomplete);
  EXPECT_TRUE(r.items.empty());
  EXPECT_FALSE(first.get().items.empty());  // A itself is answered as usual
}

TEST(engine_pool_sessions, sessions_share_one_draft_model_while_they_use_it) {
  // The daemon's own provider maker (make_pipeline_provider) on the scripted
  // model; the draft model is the scripted model too (the same vocabulary).
  auto model = std::make_shared<scripted_engine>();
  std::atomic<int> draft_loads{0};
  daemon::engine_loaders l = daemon::model_loaders();
  l.load_backend = [&](const provider_options&, std::string*) -> std::shared_ptr<completion::lm_backend> {
    return model;
  };
  l.load_draft = [&](const std::string& path, const provider_options&,
                     std::string*) -> std::shared_ptr<completion::lm_backend> {
    EXPECT_EQ(path, "/models/draft.gguf");
    ++draft_loads;
    return std::make_shared<scripted_engine>();
  };
  engine_pool pool(l);
  completion::completion_settings s = settings();
  s.draft_model = "/models/draft.gguf";
  auto a = acquire_session(pool, 1, s), b = acquire_session(pool, 2, s);
  EXPECT_EQ(draft_loads.load(), 1);
  int64_t drafted = 0;
  for (auto* p : {a.get(), b.get()}) {
    completion_result r = p->complete(keystroke("file:///w/d.py", "d", "x"), {});
    EXPECT_FALSE(r.items.empty());
    drafted += r.metrics.tokens_drafted;
  }
  EXPECT_GT(drafted, 0);  // the shared draft model drafted for them
  // It goes with the last session using it, and is loaded again for the next.
  a.reset();
  b.reset();
  auto c = acquire_session(pool, 3, s);
  EXPECT_EQ(draft_loads.load(), 2);
}
