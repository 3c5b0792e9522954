// The daemon's shared engine with several editor sessions on it: the real
// completion pipeline (on the scripted model of the pipeline tests) behind
// engine_pool, as the daemon builds it. Each window typing in its own buffer
// keeps its KV state however many windows type at once, two windows holding
// the same URI with different contents do not evict each other, the KV
// memory stays within completion.cacheMiB with many windows, and a request
// whose deadline passes while it waits behind another window's call is
// answered then (empty, incomplete), not after that call.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <future>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "server/completion/pipeline/pipeline.h"
#include "server/daemon/engine_pool.h"
#include "tests/server/completion/fake_lm.h"
#include "tests/server/daemon/pool_requests.h"

using namespace qf::server;
using qf::server::daemon::engine_pool;

namespace {

struct shared_engine {
  completion::pipeline* pipe = nullptr;  // the one engine's pipeline (touched between calls only)
  engine_pool pool;
  explicit shared_engine(size_t bytes_per_token = 64)
      : pool([this, bytes_per_token](const provider_options& o, std::string*) -> std::unique_ptr<completion_provider> {
          auto be = std::make_unique<qf::test::fake_backend>();
          be->bytes_per_token = bytes_per_token;
          auto p = std::make_unique<completion::pipeline>(std::move(be), o.completion);
          pipe = p.get();
          return p;
        }) {}
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
  std::vector<std::string> typed(tags.size());
  // The first request of each window evaluates its prompt.
  for (size_t w = 0; w < tags.size(); ++w) {
    completion_result r = windows[w]->complete(keystroke("file:///w/" + tags[w] + ".py", tags[w], typed[w]), {});
    EXPECT_GT(r.metrics.tokens_evaluated, 100) << tags[w];
  }
  // Then they type in turns: every keystroke continues its own window's cache.
  const std::string word = "result";
  for (size_t i = 0; i < word.size(); ++i) {
    for (size_t w = 0; w < tags.size(); ++w) {
      typed[w] += word[i];
      completion_result r = windows[w]->complete(keystroke("file:///w/" + tags[w] + ".py", tags[w], typed[w]), {});
      EXPECT_TRUE(r.metrics.cache_hit) << tags[w] << " keystroke " << i;
      EXPECT_GT(r.metrics.tokens_reused, 100) << tags[w] << " keystroke " << i;
      EXPECT_LE(r.metrics.tokens_evaluated, 4) << tags[w] << " keystroke " << i;
    }
  }
  // cacheSlots counts per window: four windows may hold up to 12 slots.
  EXPECT_EQ(eng.pipe->pool().max_slots(), 12);
  // Windows closing shrink the bound back (slots already made stay, within the budget).
  windows.pop_back();
  windows.pop_back();
  EXPECT_EQ(eng.pipe->pool().max_slots(), 6);
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

TEST(engine_pool_sessions, sixteen_windows_stay_within_the_memory_budget) {
  // 4 KiB a token, 1024-token slots: 4 MiB a slot; cacheMiB 24 holds 6 slots.
  shared_engine eng(4096);
  completion::completion_settings s = settings();
  s.cache_mib = 24;
  std::vector<std::unique_ptr<completion_provider>> windows;
  for (int w = 0; w < 16; ++w) windows.push_back(eng.session(w + 1, s));
  for (int round = 0; round < 2; ++round)
    for (int w = 0; w < 16; ++w) {
      const std::string tag = "win" + std::to_string(w);
      completion_result r = windows[w]->complete(keystroke("file:///w/" + tag + ".py", tag, std::string(round, 'x')), {});
      EXPECT_FALSE(r.items.empty() && r.incomplete) << tag;
    }
  EXPECT_EQ(eng.pipe->pool().max_slots(), 6);
  EXPECT_LE(eng.pipe->pool().n_slots(), 6);
  EXPECT_LE(eng.pipe->pool().bytes(), static_cast<size_t>(s.cache_mib) << 20);
}

TEST(engine_pool_sessions, a_request_past_its_deadline_while_waiting_is_answered_at_once) {
  qf::test::fake_backend* slow = nullptr;
  completion::pipeline* pipe = nullptr;
  engine_pool pool([&](const provider_options& o, std::string*) -> std::unique_ptr<completion_provider> {
    auto be = std::make_unique<qf::test::fake_backend>();
    be->per_token = std::chrono::milliseconds(4);  // a cold prompt of a few hundred tokens: about a second
    slow = be.get();
    auto p = std::make_unique<completion::pipeline>(std::move(be), o.completion);
    pipe = p.get();
    return p;
  });
  provider_options o;
  o.model_path = "/models/one.gguf";
  o.completion = settings();
  std::string err;
  auto a = pool.acquire(1, o, &err), b = pool.acquire(2, o, &err);
  ASSERT_TRUE(a && b) << err;
  ASSERT_TRUE(slow && pipe);

  std::atomic<bool> a_done{false};
  auto first = std::async(std::launch::async, [&] {
    completion_result r = a->complete(keystroke("file:///w/a.py", "a", "x"), {});
    a_done = true;
    return r;
  });
  // A's call holds the worker for about a second; B asks with a short budget meanwhile.
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  completion_request rb = keystroke("file:///w/b.py", "b", "y");
  rb.deadline = clock::now() + std::chrono::milliseconds(30);
  const completion_result r = b->complete(rb, {});
  EXPECT_FALSE(a_done) << "B was answered only after A's call";
  EXPECT_TRUE(r.incomplete);
  EXPECT_TRUE(r.items.empty());
  EXPECT_FALSE(first.get().items.empty());  // A itself is answered as usual
}
