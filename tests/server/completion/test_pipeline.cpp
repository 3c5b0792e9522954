// The whole pipeline on the scripted model: reuse across keystrokes, stale
// work, budgets, type-through, re-basing and prefetch.
#include <gtest/gtest.h>

#include "indexing/syntax_language.h"
#include "server/completion/pipeline/pipeline.h"
#include "server/completion/prompt/prompt_layout.h"
#include "tests/server/completion/fake_lm.h"

using namespace qf::server;
using namespace qf::server::completion;
using qf::test::fake_backend;

namespace {

const std::string k_uri = "file:///w/src/main.py";

std::string source() {
  std::string s = "import os\n\n";
  for (int i = 0; i < 8; ++i)
    s += "def f" + std::to_string(i) + "(self, x):\n    return self.g(x) + " + std::to_string(i) + "\n\n";
  s += "def main():\n    total = 0\n    \n    print(total)\n";
  return s;
}

completion_request request(const std::string& text, int64_t line, int64_t col, bool explicit_trigger = false) {
  completion_request r;
  r.uri = k_uri;
  r.text = text;
  r.cursor = {line, col};
  r.explicit_trigger = explicit_trigger;
  r.received = clock::now();
  return r;
}

struct fixture {
  std::shared_ptr<qf::test::fake_stats> stats;
  std::unique_ptr<pipeline> p;
  fake_backend* be = nullptr;
  explicit fixture(const completion_settings& settings = {}, std::chrono::microseconds per_token = {}, int64_t ubatch = 512,
                   qf::test::next_rule rule = qf::test::copy_rule) {
    auto b = std::make_unique<fake_backend>(std::move(rule));
    b->per_token = per_token;
    b->ubatch = ubatch;
    stats = b->stats;
    be = b.get();
    p = std::make_unique<pipeline>(std::move(b), settings);
  }
  void drain() {
    for (int i = 0; i < 100 && p->background_step({}); ++i) {
    }
  }
};

// Cursor line of source(): the empty indented line in main().
constexpr int64_t k_line = 28;

}  // namespace

TEST(pipeline, second_request_after_one_character_evaluates_only_a_few_tokens) {
  fixture f(completion_settings{.type_through = false});
  std::string text = source();
  completion_result r1 = f.p->complete(request(text, k_line, 4, true), {});
  EXPECT_FALSE(r1.metrics.cache_hit);
  EXPECT_GT(r1.metrics.tokens_evaluated, 100);
  ASSERT_FALSE(r1.items.empty());
  // Type a character at the cursor.
  for (int i = 0; i < 5; ++i) {
    text.insert(offset_of(text, k_line, 4 + i), "t");
    completion_result r = f.p->complete(request(text, k_line, 5 + i, true), {});
    EXPECT_TRUE(r.metrics.cache_hit);
    EXPECT_LE(r.metrics.tokens_evaluated, 3) << "keystroke " << i;
    EXPECT_GT(r.metrics.tokens_reused, 100);
  }
}

TEST(pipeline, stale_request_stops_and_the_next_is_served_from_the_kept_prefix) {
  qf::cancel_source src;
  size_t cancel_after = 0;
  fixture f(completion_settings{.stop_rules = false, .type_through = false}, {}, 512,
            [&](std::span<const int32_t> h) {
              if (cancel_after && h.size() >= cancel_after) src.cancel(qf::cancel_reason::content_modified);
              return qf::test::copy_rule(h);
            });
  std::string text = source();
  // Learn the prompt size with a first request, then cancel the second one mid-generation.
  completion_result r0 = f.p->complete(request(text, k_line, 4, true), {});
  const size_t prompt_len = static_cast<size_t>(r0.metrics.tokens_reused + r0.metrics.tokens_evaluated);
  text.insert(offset_of(text, k_line, 4), "x");
  cancel_after = prompt_len + 3;
  completion_result r1 = f.p->complete(request(text, k_line, 5, true), src.token());
  EXPECT_TRUE(r1.items.empty());
  EXPECT_LT(r1.metrics.tokens_generated, 128);
  cancel_after = 0;
  text.insert(offset_of(text, k_line, 5), "y");
  completion_result r2 = f.p->complete(request(text, k_line, 6, true), {});
  EXPECT_FALSE(r2.items.empty());
  EXPECT_LE(r2.metrics.tokens_evaluated, 3);
}

TEST(pipeline, slow_engine_answers_incomplete_within_budget_then_warms_the_cache) {
  fixture f(completion_settings{.max_tokens_auto = 4, .type_through = false}, std::chrono::microseconds(1500), 16);
  std::string text = source();
  completion_request req = request(text, k_line, 4);
  req.deadline = req.received + std::chrono::milliseconds(40);
  completion_result r = f.p->complete(req, {});
  EXPECT_TRUE(r.incomplete);
  EXPECT_TRUE(r.items.empty());
  const int64_t first_eval = r.metrics.tokens_evaluated;
  EXPECT_GT(f.p->pending_background(), 0u);
  // Background work finishes the prompt; it is preemptible.
  qf::cancel_source pre;
  pre.cancel(qf::cancel_reason::preempted);
  EXPECT_TRUE(f.p->background_step(pre.token()));  // preempted at once: work remains
  f.drain();
  EXPECT_EQ(f.p->pending_background(), 0u);
  EXPECT_GT(f.stats->evaluated, first_eval);
  // The next keystroke hits the warm cache.
  completion_result r2 = f.p->complete(request(text, k_line, 4), {});
  EXPECT_FALSE(r2.incomplete);
  EXPECT_LE(r2.metrics.tokens_evaluated, 1);
  EXPECT_FALSE(r2.items.empty());
}

TEST(pipeline, type_through_answers_without_the_model) {
  // The model says "qqq" and ends the line.
  fixture f({}, {}, 512, [](std::span<const int32_t> h) -> int32_t {
    const size_t n = h.size();
    return n >= 3 && h[n - 1] == 'q' && h[n - 2] == 'q' && h[n - 3] == 'q' ? '\n' : 'q';
  });
  std::string text = source();
  // End of "    total = 0": an automatic, single-line completion. ("0qqq" is
  // no Python: the document is plain text here, so that no syntax rule cuts it.)
  auto plain = [](completion_request r) {
    r.uri = "file:///w/src/notes.txt";
    return r;
  };
  completion_result r = f.p->complete(plain(request(text, k_line - 1, 13)), {});
  ASSERT_FALSE(r.items.empty());
  const completion_candidate& c = r.items[0];
  const std::string suggestion = c.insert_text.substr(static_cast<size_t>(c.replace_end.byte_col - c.replace_begin.byte_col));
  ASSERT_EQ(suggestion, "qqq");
  const int64_t evals = f.stats->eval_calls;
  text.insert(offset_of(text, k_line - 1, 13), suggestion.substr(0, 1));
  completion_result t = f.p->complete(plain(request(text, k_line - 1, 14)), {});
  EXPECT_TRUE(t.metrics.type_through);
  EXPECT_EQ(f.stats->eval_calls, evals);
  ASSERT_EQ(t.items.size(), 1u);
  // The edit covers the word typed so far plus the rest of the suggestion.
  EXPECT_EQ(t.items[0].insert_text.substr(t.items[0].insert_text.size() - (suggestion.size() - 1)), suggestion.substr(1));
}

TEST(pipeline, syntax_rules_follow_the_document_language) {
  // The model says "qqq" and ends the line: at the end of "    total = 0"
  // that makes the token "0qqq", no Python at any cut, so a Python document
  // gets no suggestion while plain text keeps it.
  fixture f(completion_settings{.type_through = false}, {}, 512, [](std::span<const int32_t> h) -> int32_t {
    const size_t n = h.size();
    return n >= 3 && h[n - 1] == 'q' && h[n - 2] == 'q' && h[n - 3] == 'q' ? '\n' : 'q';
  });
  const std::string text = source();
  completion_request py = request(text, k_line - 1, 13);
  completion_result r = f.p->complete(py, {});
  if (qf::index::syntax_language_named("python")) {
    EXPECT_TRUE(r.items.empty());
  }
  completion_request txt = request(text, k_line - 1, 13);
  txt.uri = "file:///w/src/notes.txt";
  r = f.p->complete(txt, {});
  ASSERT_EQ(r.items.size(), 1u);
  EXPECT_EQ(r.items[0].insert_text, "0qqq");  // the word before the cursor, then the suggestion
}

TEST(pipeline, no_automatic_completion_mid_word) {
  fixture f;
  std::string text = "value = compute(x)\n";
  completion_result r = f.p->complete(request(text, 0, 3), {});
  EXPECT_TRUE(r.items.empty());
  EXPECT_FALSE(r.incomplete);
  EXPECT_EQ(f.stats->eval_calls, 0);
}

TEST(pipeline, rebase_in_the_background_then_the_next_keystroke_hits) {
  fixture f(completion_settings{.type_through = false});
  std::string text = source();
  f.p->complete(request(text, k_line, 4, true), {});
  ASSERT_EQ(f.p->layout_of(k_uri)->anchor_line, k_line);
  // The user types a line and starts another.
  text.insert(offset_of(text, k_line, 4), "total += 1\n    ");
  f.p->complete(request(text, k_line + 1, 4, true), {});
  EXPECT_EQ(f.p->layout_of(k_uri)->anchor_line, k_line);  // still the old layout
  f.drain();
  text.insert(offset_of(text, k_line + 1, 4), "p");
  completion_result r = f.p->complete(request(text, k_line + 1, 5, true), {});
  EXPECT_EQ(f.p->layout_of(k_uri)->anchor_line, k_line + 1);  // the re-based layout was adopted
  EXPECT_LE(r.metrics.tokens_evaluated, 3);
}

TEST(pipeline, prefetch_answers_the_accepted_suggestion_at_once) {
  fixture f(completion_settings{.prefetch = true});
  std::string text = source();
  completion_result r = f.p->complete(request(text, k_line, 4, true), {});
  ASSERT_FALSE(r.items.empty());
  f.drain();
  const std::string s = r.items[0].insert_text;
  text.insert(offset_of(text, k_line, 4), s);
  // The cursor after the accepted text.
  std::string_view before = std::string_view(text).substr(0, offset_of(text, k_line, 4) + s.size());
  int64_t line = std::count(before.begin(), before.end(), '\n');
  int64_t col = static_cast<int64_t>(before.size() - (before.rfind('\n') + 1));
  const int64_t evals = f.stats->eval_calls;
  completion_result n = f.p->complete(request(text, line, col, true), {});
  EXPECT_EQ(f.stats->eval_calls, evals);
  EXPECT_TRUE(n.metrics.cache_hit);
  // The same edit as a pipeline that decodes there: the word before the
  // cursor replaced once, the prefetched suggestion after it.
  fixture fresh(completion_settings{.type_through = false});
  completion_result d = fresh.p->complete(request(text, line, col, true), {});
  ASSERT_FALSE(n.items.empty());
  ASSERT_FALSE(d.items.empty());
  EXPECT_EQ(n.items[0].insert_text, d.items[0].insert_text);
  EXPECT_EQ(n.items[0].replace_begin.byte_col, d.items[0].replace_begin.byte_col);
  EXPECT_EQ(n.items[0].replace_end.byte_col, d.items[0].replace_end.byte_col);
}

TEST(pipeline, closing_a_document_forgets_it) {
  fixture f;
  std::string text = source();
  f.p->complete(request(text, k_line, 4, true), {});
  ASSERT_NE(f.p->layout_of(k_uri), nullptr);
  f.p->document_closed(k_uri);
  EXPECT_EQ(f.p->layout_of(k_uri), nullptr);
  EXPECT_EQ(f.p->pending_background(), 0u);
}

TEST(pipeline, after_a_jump_and_back_only_the_typed_text_is_evaluated) {
  fixture f(completion_settings{.prefix_tokens = 48, .suffix_tokens = 24, .type_through = false});
  std::string text;
  for (int i = 0; i < 60; ++i)
    text += "def f" + std::to_string(i) + "(self, x):\n    return self.g(x) + " + std::to_string(i) + "\n\n";
  auto line_end = [&](int64_t line) {
    const size_t b = offset_of(text, line, 0);
    return static_cast<int64_t>(text.find('\n', b) - b);
  };
  auto type_at = [&](int64_t line, const std::string& s) {
    const int64_t col = line_end(line);
    text.insert(offset_of(text, line, col), s);
    return f.p->complete(request(text, line, col + static_cast<int64_t>(s.size()), true), {});
  };
  const int64_t a = 16, b = 151;  // the return lines of f5 and f50
  type_at(a, " ");
  EXPECT_LE(type_at(a, "x").metrics.tokens_evaluated, 3);
  // The jump: a region the cache has not seen.
  const completion_result jump = type_at(b, " ");
  EXPECT_GT(jump.metrics.tokens_evaluated, 40);
  EXPECT_LE(type_at(b, "y").metrics.tokens_evaluated, 3);
  // Back to the first region: its layout and its KV slot were kept.
  const completion_result back = type_at(a, "z");
  EXPECT_LE(back.metrics.tokens_evaluated, 3);
  EXPECT_GT(back.metrics.tokens_reused, 40);
  // And to the second again.
  EXPECT_LE(type_at(b, "w").metrics.tokens_evaluated, 3);
}

TEST(pipeline, a_jump_answers_from_a_quick_layout_then_the_full_one_is_warmed_in_the_background) {
  fixture f(completion_settings{.prefix_tokens = 160, .suffix_tokens = 60, .jump_prefix_tokens = 40, .type_through = false});
  std::string text;
  for (int i = 0; i < 60; ++i)
    text += "def f" + std::to_string(i) + "(self, x):\n    return self.g(x) + " + std::to_string(i) + "\n\n";
  auto type_at = [&](int64_t line, const std::string& s) {
    const size_t b = offset_of(text, line, 0);
    const int64_t col = static_cast<int64_t>(text.find('\n', b) - b);
    text.insert(b + static_cast<size_t>(col), s);
    return f.p->complete(request(text, line, col + static_cast<int64_t>(s.size()), true), {});
  };
  const completion_result first = type_at(16, " ");
  EXPECT_FALSE(f.p->layout_of(k_uri)->quick);
  const int64_t whole = first.metrics.tokens_evaluated;
  // The jump: a small prompt first.
  const completion_result jump = type_at(151, " ");
  ASSERT_TRUE(f.p->layout_of(k_uri)->quick);
  EXPECT_FALSE(jump.incomplete);
  EXPECT_LT(jump.metrics.tokens_evaluated, whole / 2);
  EXPECT_LE(type_at(151, "y").metrics.tokens_evaluated, 3);
  // The full layout is warmed in the background and taken at the next keystroke.
  EXPECT_GT(f.p->pending_background(), 0u);
  f.drain();
  const completion_result after = type_at(151, "z");
  EXPECT_FALSE(f.p->layout_of(k_uri)->quick);
  EXPECT_LE(after.metrics.tokens_evaluated, 3);
  EXPECT_GT(after.metrics.tokens_reused, jump.metrics.tokens_reused + jump.metrics.tokens_evaluated);
}
