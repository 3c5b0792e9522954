// The server core's request policy (server_core_requests.cpp) through its
// typed calls, on a real core with its worker thread and a dispatcher queue
// pumped by the test: the deadline of each trigger, a stats record for every
// completion however it ends, one reply per request (a cancellation and a
// late result never both), ContentModified when the document changed while
// the result waited for the dispatcher, the document failures, and the next
// edits an inline completion offers. Also the one map from these failures to
// LSP error codes (server/binding/lsp_errors.h).
#include <gtest/gtest.h>

#include <condition_variable>
#include <deque>
#include <mutex>

#include "server/binding/lsp_errors.h"
#include "server/core/server_core.h"
#include "tests/server/test_provider.h"

using namespace qf::server;

namespace {

// The dispatcher thread of a binding: the core posts here, the test pumps.
class dispatcher_queue {
 public:
  void post(std::function<void()> fn) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      q_.push_back(std::move(fn));
    }
    cv_.notify_all();
  }
  // Runs what is posted until `done` holds; false after a minute without it.
  bool pump_until(const std::function<bool()>& done) {
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::minutes(1);
    while (!done()) {
      std::function<void()> fn;
      {
        std::unique_lock<std::mutex> lock(mu_);
        if (!cv_.wait_until(lock, give_up, [&] { return !q_.empty(); })) return false;
        fn = std::move(q_.front());
        q_.pop_front();
      }
      fn();
    }
    return true;
  }
  // Waits (without running anything) until something is posted.
  bool wait_posted() {
    std::unique_lock<std::mutex> lock(mu_);
    return cv_.wait_for(lock, std::chrono::minutes(1), [&] { return !q_.empty(); });
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> q_;
};

// The test double, recording the last completion request it was given.
class recording_provider final : public completion_provider {
 public:
  completion_result complete(const completion_request& req, const qf::cancel_token& cancel) override {
    {
      std::lock_guard<std::mutex> lock(mu);
      budget = std::chrono::duration_cast<std::chrono::milliseconds>(req.deadline - req.received);
      started = true;
    }
    return inner.complete(req, cancel);
  }
  std::optional<prompt_explanation> explain(const completion_request& req) override { return inner.explain(req); }
  next_edit_result next_edit(const next_edit_request& req, const qf::cancel_token& cancel) override {
    return inner.next_edit(req, cancel);
  }
  bool background_step(const qf::cancel_token& cancel) override { return inner.background_step(cancel); }
  void document_closed(const std::string& uri) override { inner.document_closed(uri); }
  void configure(const completion::completion_settings& s) override { inner.configure(s); }
  std::string describe() const override { return "recording test double"; }

  static inline std::mutex mu;
  static inline std::chrono::milliseconds budget{0};
  static inline std::atomic<bool> started{false};

 private:
  qf::server::testing::test_provider inner{[](const std::string&) {}};
};

struct core_fixture {
  dispatcher_queue dispatcher;
  server_core core;

  core_fixture() : core(options(), [this](std::function<void()> fn) { dispatcher.post(std::move(fn)); }) {
    recording_provider::started = false;
    core.start();
    bool loaded = false;
    core.load_model(nullptr, [&](const model_state& st) { loaded = st.loaded; });
    EXPECT_TRUE(dispatcher.pump_until([&] { return loaded; }));
  }

  static core_options options() {
    core_options o;
    o.cli_model_path = "test-double";
    o.background = false;
    o.user_config_path = "";
    o.factory = [](const provider_options&, std::string*) { return std::make_unique<recording_provider>(); };
    return o;
  }

  void open(const std::string& uri, const std::string& text, std::int64_t version = 1) {
    std::string error;
    ASSERT_TRUE(core.open(uri, "python", version, text, &error)) << error;
  }

  request_place place(const std::string& uri, std::int64_t line, std::int64_t byte_col) {
    outcome<qf::index::document_store::snapshot> d = core.request_document(uri);
    EXPECT_TRUE(std::holds_alternative<qf::index::document_store::snapshot>(d));
    return request_place{std::get<qf::index::document_store::snapshot>(d), text_pos{line, byte_col}};
  }

  completion_call completion(const std::string& key, request_place at, bool explicit_trigger, bool inline_request) {
    completion_call c;
    c.key = key;
    c.at = std::move(at);
    c.explicit_trigger = explicit_trigger;
    c.inline_request = inline_request;
    return c;
  }

  boost::json::value stats() { return core.stats_json(10); }
};

template <class T>
struct replies {
  std::mutex mu;
  std::vector<outcome<T>> got;
  reply_fn<T> fn() {
    return [this](outcome<T> o) {
      std::lock_guard<std::mutex> lock(mu);
      got.push_back(std::move(o));
    };
  }
  std::size_t size() {
    std::lock_guard<std::mutex> lock(mu);
    return got.size();
  }
};

std::int64_t count_at(const boost::json::value& v, std::string_view key) {
  return v.at(key).to_number<std::int64_t>();
}

}  // namespace

TEST(CoreRequests, EachTriggerGetsItsDeadlineAndEveryAnswerIsRecorded) {
  core_fixture f;
  f.open("file:///a.py", "value = foo");
  const server_settings s = f.core.settings();
  replies<completion_answer> r;
  f.core.request_completion(f.completion("1", f.place("file:///a.py", 0, 11), true, false), r.fn());
  ASSERT_TRUE(f.dispatcher.pump_until([&] { return r.size() == 1; }));
  EXPECT_EQ(recording_provider::budget, std::chrono::milliseconds(s.explicit_deadline_ms));
  f.core.request_completion(f.completion("2", f.place("file:///a.py", 0, 11), false, true), r.fn());
  ASSERT_TRUE(f.dispatcher.pump_until([&] { return r.size() == 2; }));
  EXPECT_EQ(recording_provider::budget, std::chrono::milliseconds(s.auto_deadline_ms));

  const completion_answer& a = std::get<completion_answer>(r.got[0]);
  ASSERT_EQ(a.result.items.size(), 1u);
  EXPECT_EQ(a.result.items[0].insert_text, "foo_done");
  EXPECT_EQ(a.doc, f.core.documents().get("file:///a.py"));  // the snapshot its positions are in
  EXPECT_FALSE(a.no_model);
  EXPECT_FALSE(a.failed);

  const boost::json::value st = f.stats();
  EXPECT_EQ(count_at(st, "requests"), 2);
  EXPECT_EQ(count_at(st, "answered"), 2);
  const boost::json::array& recent = st.at("recent").as_array();
  ASSERT_EQ(recent.size(), 2u);
  EXPECT_EQ(recent[0].at("explicit"), boost::json::value(true));
  EXPECT_EQ(recent[1].at("kind"), boost::json::value("inline"));
  EXPECT_EQ(count_at(recent[0], "items"), 1);
}

TEST(CoreRequests, ACancelledRequestIsAnsweredOnceAtOnceAndRecorded) {
  core_fixture f;
  f.open("file:///b.py", "BLOCK = 1");
  replies<completion_answer> r;
  f.core.request_completion(f.completion("7", f.place("file:///b.py", 0, 5), true, false), r.fn());
  while (!recording_provider::started) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  EXPECT_TRUE(f.core.cancel("7"));
  // Answered on this (the cancelling) thread, without waiting for the worker.
  ASSERT_EQ(r.size(), 1u);
  const request_failure& fail = std::get<request_failure>(r.got[0]);
  EXPECT_EQ(fail.what, request_failure::kind::cancelled);
  EXPECT_EQ(fail.reason, qf::cancel_reason::cancelled);
  EXPECT_EQ(fail.message, "request cancelled");
  EXPECT_EQ(error_code_of(fail), qf::lsp::error_code::request_cancelled);
  EXPECT_FALSE(f.core.cancel("7"));  // not twice

  // An edit cancels the next one with content_modified.
  f.core.request_completion(f.completion("8", f.place("file:///b.py", 0, 5), false, false), r.fn());
  std::string error;
  ASSERT_TRUE(f.core.change("file:///b.py", 2, {qf::index::text_change{std::nullopt, "BLOCK = 2"}},
                            qf::text::position_encoding::utf16, &error))
      << error;
  ASSERT_EQ(r.size(), 2u);
  EXPECT_EQ(std::get<request_failure>(r.got[1]).reason, qf::cancel_reason::content_modified);
  EXPECT_EQ(error_code_of(std::get<request_failure>(r.got[1])), qf::lsp::error_code::content_modified);

  const boost::json::value st = f.stats();
  EXPECT_EQ(count_at(st, "requests"), 2);
  EXPECT_EQ(count_at(st.at("cancellations"), "cancelled"), 1);
  EXPECT_EQ(count_at(st.at("cancellations"), "content_modified"), 1);
  // Nothing else arrives later: the worker's results were dropped.
  f.core.stop();
  EXPECT_EQ(r.size(), 2u);
}

TEST(CoreRequests, AResultForATextThatChangedMeanwhileIsContentModified) {
  core_fixture f;
  f.open("file:///c.py", "name = abc");
  replies<completion_answer> r;
  f.core.request_completion(f.completion("1", f.place("file:///c.py", 0, 10), true, false), r.fn());
  // The worker's result waits for the dispatcher; the document changes first.
  ASSERT_TRUE(f.dispatcher.wait_posted());
  std::string error;
  ASSERT_TRUE(f.core.change("file:///c.py", 2, {qf::index::text_change{std::nullopt, "name = abcd"}},
                            qf::text::position_encoding::utf16, &error));
  ASSERT_TRUE(f.dispatcher.pump_until([&] { return r.size() == 1; }));
  const request_failure& fail = std::get<request_failure>(r.got[0]);
  EXPECT_EQ(fail.reason, qf::cancel_reason::content_modified);
  EXPECT_EQ(fail.message, "the document changed; the request is stale");
  EXPECT_EQ(count_at(f.stats().at("cancellations"), "content_modified"), 1);
  EXPECT_EQ(count_at(f.stats(), "answered"), 0);
}

TEST(CoreRequests, DocumentsThatCannotBeReadAreFailuresWithTheirKind) {
  core_fixture f;
  const auto missing = f.core.request_document("file:///none.py");
  ASSERT_TRUE(std::holds_alternative<request_failure>(missing));
  EXPECT_EQ(std::get<request_failure>(missing).what, request_failure::kind::not_open);
  EXPECT_EQ(std::get<request_failure>(missing).message, "document is not open: file:///none.py");
  EXPECT_EQ(error_code_of(std::get<request_failure>(missing)), qf::lsp::error_code::invalid_params);

  f.open("file:///d.py", "x = 1");
  f.core.document_lost("file:///d.py", "a didChange was lost");
  const auto stale = f.core.request_document("file:///d.py");
  ASSERT_TRUE(std::holds_alternative<request_failure>(stale));
  EXPECT_EQ(std::get<request_failure>(stale).what, request_failure::kind::unavailable);
  EXPECT_NE(std::get<request_failure>(stale).message.find("out of sync"), std::string::npos);
  EXPECT_EQ(error_code_of(std::get<request_failure>(stale)), qf::lsp::error_code::request_failed);
}

TEST(CoreRequests, AnInlineCompletionOffersTheNextEditsOfItsSnapshotOnTheCursorsLine) {
  core_fixture f;
  f.open("file:///e.py", "ab cd\nlast\n");
  replies<next_edit_answer> ne;
  f.core.request_next_edit(next_edit_call{"n1", f.place("file:///e.py", 0, 2)}, ne.fn());
  ASSERT_TRUE(f.dispatcher.pump_until([&] { return ne.size() == 1; }));
  const next_edit_answer& prediction = std::get<next_edit_answer>(ne.got[0]);
  EXPECT_EQ(prediction.id, "next-edit-1");
  ASSERT_EQ(prediction.result.edits.size(), 2u);  // "_next" at the end of line 0, "# end" on line 1
  EXPECT_FALSE(prediction.reason);

  replies<completion_answer> r;
  f.core.request_completion(f.completion("c1", f.place("file:///e.py", 0, 2), false, true), r.fn());
  f.core.request_completion(f.completion("c2", f.place("file:///e.py", 0, 2), false, false), r.fn());
  ASSERT_TRUE(f.dispatcher.pump_until([&] { return r.size() == 2; }));
  const completion_result& inline_items = std::get<completion_answer>(r.got[0]).result;
  ASSERT_EQ(inline_items.items.size(), 2u);  // the candidate, then the edit on the cursor's line
  // Widened to hold the cursor: from the cursor (0:2) to the edit's end (0:5).
  EXPECT_EQ(inline_items.items[1].insert_text, " cd_next");
  EXPECT_EQ(inline_items.items[1].replace_begin.byte_col, 2);
  EXPECT_EQ(inline_items.items[1].replace_end.byte_col, 5);
  EXPECT_FALSE(inline_items.items[1].score);
  EXPECT_EQ(std::get<completion_answer>(r.got[1]).result.items.size(), 1u);  // a list never
  EXPECT_EQ(count_at(f.stats().at("recent").at(0), "items"), 1);  // the stats count the candidates

  // Another snapshot: the prediction is not offered.
  std::string error;
  ASSERT_TRUE(f.core.change("file:///e.py", 2, {qf::index::text_change{std::nullopt, "ab cd\nlast\n\n"}},
                            qf::text::position_encoding::utf16, &error));
  f.core.request_completion(f.completion("c3", f.place("file:///e.py", 0, 2), false, true), r.fn());
  ASSERT_TRUE(f.dispatcher.pump_until([&] { return r.size() == 3; }));
  EXPECT_EQ(std::get<completion_answer>(r.got[2]).result.items.size(), 1u);
}

TEST(CoreRequests, ExplainingAPrivateDocumentIsUnavailable) {
  core_fixture f;
  f.open("file:///p.env", "SECRET=1");
  quickfill_settings s;
  s.privacy.exclude = {"*.env"};
  f.core.apply_settings(s);
  replies<prompt_explanation> r;
  f.core.request_explanation(explain_call{"x1", f.place("file:///p.env", 0, 3)}, r.fn());
  ASSERT_EQ(r.size(), 1u);
  const request_failure& fail = std::get<request_failure>(r.got[0]);
  EXPECT_EQ(fail.what, request_failure::kind::unavailable);
  EXPECT_NE(fail.message.find("is kept out of completions and prompts"), std::string::npos) << fail.message;
}
