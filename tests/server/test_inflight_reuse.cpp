// In-flight reuse through the scheduler and the real pipeline on the scripted
// model: a generation the user types along with keeps running detached from
// its (answered) request and answers the next request by type-through; an
// edit or a request that does not continue it cancels it. The model blocks
// after its third token until the test releases it, so every edit lands while
// the generation runs (no sleep decides an outcome).
#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <future>
#include <mutex>

#include "server/completion/api/inflight.h"
#include "server/completion/pipeline/pipeline.h"
#include "server/completion/prompt/prompt_layout.h"
#include "server/core/scheduler.h"
#include "server/core/stats.h"
#include "tests/server/completion/fake_lm.h"

using namespace qf;
using namespace qf::server;
using namespace qf::server::completion;

namespace {

const std::string k_uri = "file:///w/notes.txt";  // plain text: no syntax rule cuts the suggestion
const std::string k_group = k_uri + "#inline";

std::string source() {
  std::string s;
  for (int i = 0; i < 6; ++i) s += "line " + std::to_string(i) + " of the notes\n";
  s += "total = \n";
  return s;
}
constexpr int64_t k_line = 6, k_col = 8;  // after "total = "

// The model says "q" forever, but stops after its third q until released.
struct gate {
  std::mutex mu;
  std::condition_variable cv;
  bool released = false;
  bool held_once = false;
  void release() {
    {
      std::lock_guard<std::mutex> lock(mu);
      released = true;
    }
    cv.notify_all();
  }
  int32_t rule(std::span<const int32_t> h) {
    const size_t n = h.size();
    if (n >= 3 && h[n - 1] == 'q' && h[n - 2] == 'q' && h[n - 3] == 'q' && (n < 4 || h[n - 4] != 'q')) {
      std::unique_lock<std::mutex> lock(mu);
      if (!held_once) {
        held_once = true;
        cv.wait_for(lock, std::chrono::seconds(20), [&] { return released; });
      }
    }
    return 'q';
  }
};

struct result_box {
  std::promise<completion_result> result;
  std::promise<cancel_reason> cancelled;
  std::atomic<int> cancel_calls{0};
  std::atomic<bool> token_cancelled{false};
};

struct fixture {
  stats_collector stats;
  scheduler sched{&stats, false};
  gate g;

  fixture() {
    auto be = std::make_unique<qf::test::fake_backend>([this](std::span<const int32_t> h) { return g.rule(h); });
    auto p = std::make_shared<std::unique_ptr<completion_provider>>(std::make_unique<pipeline>(
        std::move(be), completion_settings{.max_tokens_auto = 12, .stop_rules = false, .speculative = false}));
    sched.start();
    std::promise<void> installed;
    sched.post_task([&installed, p](scheduler::provider_slot& slot) {
      slot = std::move(*p);
      installed.set_value();
    });
    installed.get_future().wait();
  }
  ~fixture() {
    g.release();
    sched.stop();
  }

  std::shared_ptr<generation_progress> submit(const std::string& key, const std::string& text, int64_t col,
                                              result_box& box) {
    completion_request req;
    req.uri = k_uri;
    req.text = text;
    req.cursor = {k_line, col};
    req.inline_request = true;
    req.received = clock::now();
    req.progress = std::make_shared<generation_progress>();
    scheduler::job j;
    j.key = key;
    j.uri = k_uri;
    j.group = k_group;
    j.text = req.text;
    j.cursor = offset_of(text, k_line, col);
    j.progress = req.progress;
    j.run = [req, &box](completion_provider* p, const cancel_token& t) {
      completion_result r = p->complete(req, t);
      box.token_cancelled = t.is_cancelled();
      box.result.set_value(std::move(r));
    };
    j.on_cancel = [&box](cancel_reason why) {
      if (box.cancel_calls++ == 0) box.cancelled.set_value(why);
    };
    auto progress = req.progress;
    sched.submit(std::move(j));
    return progress;
  }
};

bool wait_text(const generation_progress& p, const std::string& want) {
  for (int i = 0; i < 4000; ++i) {
    if (p.text() == want) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return false;
}

std::string typed(std::string text, const std::string& s) {
  text.insert(offset_of(text, k_line, k_col), s);
  return text;
}

// The suggestion part of a candidate (its edit may cover the word typed so far).
std::string rest_of(const completion_candidate& c) {
  return c.insert_text.substr(static_cast<size_t>(c.replace_end.byte_col - c.replace_begin.byte_col));
}

}  // namespace

TEST(InflightReuse, TypingWhatWasProducedKeepsTheGenerationAndAnswersTheNextRequest) {
  result_box first, second;  // outlive f: its stop() may still answer a job
  fixture f;
  auto progress = f.submit("1", source(), k_col, first);
  ASSERT_TRUE(wait_text(*progress, "qqq"));
  const std::string after = typed(source(), "qq");
  EXPECT_EQ(f.sched.document_edited(k_uri, after), 0u);  // nothing cancelled
  // The stale request is answered at once; its work is detached, not stopped.
  ASSERT_EQ(first.cancelled.get_future().wait_for(std::chrono::seconds(5)), std::future_status::ready);
  EXPECT_TRUE(progress->detached());
  EXPECT_EQ(f.sched.detached(), 1u);
  f.submit("2", after, k_col + 2, second);  // continues it: latest-wins leaves it running
  f.g.release();
  completion_result r1 = first.result.get_future().get();
  EXPECT_FALSE(first.token_cancelled);
  ASSERT_EQ(r1.items.size(), 1u);
  EXPECT_EQ(rest_of(r1.items[0]), std::string(12, 'q'));
  completion_result r2 = second.result.get_future().get();
  EXPECT_EQ(second.cancel_calls, 0);
  EXPECT_TRUE(r2.metrics.type_through);
  EXPECT_TRUE(r2.metrics.kept);
  EXPECT_EQ(r2.metrics.tokens_generated, 0);
  ASSERT_EQ(r2.items.size(), 1u);
  EXPECT_EQ(rest_of(r2.items[0]), std::string(10, 'q'));
}

TEST(InflightReuse, AnEditThatDivergesCancelsTheGeneration) {
  result_box first;  // outlives f
  fixture f;
  auto progress = f.submit("1", source(), k_col, first);
  ASSERT_TRUE(wait_text(*progress, "qqq"));
  EXPECT_EQ(f.sched.document_edited(k_uri, typed(source(), "qx")), 1u);
  EXPECT_EQ(first.cancelled.get_future().get(), cancel_reason::content_modified);
  f.g.release();
  first.result.get_future().get();
  EXPECT_TRUE(first.token_cancelled);
  EXPECT_FALSE(progress->detached());
}

TEST(InflightReuse, TypingMoreThanWasProducedCancels) {
  result_box first;  // outlives f
  fixture f;
  auto progress = f.submit("1", source(), k_col, first);
  ASSERT_TRUE(wait_text(*progress, "qqq"));
  EXPECT_EQ(f.sched.document_edited(k_uri, typed(source(), "qqqq")), 1u);
  f.g.release();
  first.result.get_future().get();
  EXPECT_TRUE(first.token_cancelled);
}

TEST(InflightReuse, ARequestThatDoesNotContinueTheDetachedGenerationPreemptsIt) {
  result_box first, second;  // outlive f: its stop() may still answer a job
  fixture f;
  auto progress = f.submit("1", source(), k_col, first);
  ASSERT_TRUE(wait_text(*progress, "qqq"));
  const std::string after = typed(source(), "q");
  EXPECT_EQ(f.sched.document_edited(k_uri, after), 0u);
  ASSERT_TRUE(progress->detached());
  f.submit("2", after, k_col - 3, second);  // same text, the cursor elsewhere
  f.g.release();
  first.result.get_future().get();
  EXPECT_TRUE(first.token_cancelled);
  completion_result r2 = second.result.get_future().get();
  EXPECT_FALSE(r2.metrics.kept);
}

TEST(InflightReuse, TheClientsCancelDetachesWorkThatHasProducedTextAndAnEditDecides) {
  result_box first;  // outlives f
  fixture f;
  auto progress = f.submit("1", source(), k_col, first);
  ASSERT_TRUE(wait_text(*progress, "qqq"));
  EXPECT_TRUE(f.sched.cancel("1", cancel_reason::cancelled));
  EXPECT_EQ(first.cancelled.get_future().get(), cancel_reason::cancelled);
  EXPECT_TRUE(progress->detached());
  EXPECT_FALSE(f.sched.cancel("1", cancel_reason::cancelled));  // answered: nothing left to cancel by key
  EXPECT_EQ(f.sched.document_edited(k_uri, typed(source(), "z")), 1u);
  f.g.release();
  first.result.get_future().get();
  EXPECT_TRUE(first.token_cancelled);
  EXPECT_EQ(first.cancel_calls, 1);  // the request was answered once
}

TEST(InflightReuse, ContinuesGenerationChecksTheInsertion) {
  const std::string before = "ab\ncd\n";
  EXPECT_EQ(continues_generation(before, 2, "xyz", "abxy\ncd\n"), 2u);
  EXPECT_EQ(continues_generation(before, 2, "xyz", "abxyz\ncd\n"), 3u);
  EXPECT_FALSE(continues_generation(before, 2, "xyz", "abxyzw\ncd\n"));  // more than produced
  EXPECT_FALSE(continues_generation(before, 2, "xyz", "abxq\ncd\n"));    // other characters
  EXPECT_FALSE(continues_generation(before, 2, "xyz", "ab\ncd\n"));      // nothing typed
  EXPECT_FALSE(continues_generation(before, 2, "xyz", "abx\ncdy\n"));    // text elsewhere changed
  EXPECT_EQ(continues_generation(before, 1, "xyz", "axb\ncd\n"), 1u);
  EXPECT_FALSE(continues_generation(before, 2, "x\ny", "abx\n\ncd\n"));  // a line break typed
  EXPECT_FALSE(continues_generation(before, 2, "", "abx\ncd\n"));        // nothing produced yet
  EXPECT_FALSE(continues_generation(before, 9, "xyz", "abx\ncd\n"));     // cursor past the end
}
