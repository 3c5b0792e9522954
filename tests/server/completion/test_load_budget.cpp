// Degradation under load: the estimate and policy (load_budget.h), and the
// pipeline on the scripted model with a scripted engine load (fake_backend's
// load()) or a per-token delay: requests whose estimate breaks their deadline
// get fewer candidates and tokens, the others are untouched, background work
// waits while others' work runs, explain says what a request would get, and
// completion.degrade off turns all of it off.
#include <gtest/gtest.h>

#include "server/completion/pipeline/load_budget.h"
#include "server/completion/pipeline/pipeline.h"
#include "tests/server/completion/fake_lm.h"

using namespace qf::server;
using namespace qf::server::completion;
using namespace std::chrono_literals;
using qf::test::fake_backend;

namespace {

// ---- The estimate and the policy ----

load_request asked(int64_t rows, int max_tokens, int candidates, double left_ms) {
  return load_request{.prompt_rows = rows, .max_tokens = max_tokens, .candidates = candidates, .left_ms = left_ms};
}

TEST(load_budget, a_request_that_fits_is_untouched) {
  const load_decision d = plan_load(asked(100, 32, 1, 400), load_rates{1.0, 5.0}, lm_load{}, load_policy{});
  EXPECT_DOUBLE_EQ(d.estimate_ms, 100 * 1.0 + 32 * 5.0);
  EXPECT_FALSE(d.over_budget);
  EXPECT_FALSE(d.shortened);
  EXPECT_FALSE(d.candidates_dropped);
  EXPECT_EQ(d.max_tokens, 32);
  EXPECT_EQ(d.candidates, 1);
}

TEST(load_budget, others_rows_are_waited_for_at_the_engines_rates_while_it_is_busy) {
  // Busy: the engine's rates replace the pipeline's own, and 200 waiting rows cost 200 x 2 ms.
  const lm_load busy{.sequences = 2, .rows_waiting = 200, .ms_per_step = 20, .ms_per_row = 2};
  const load_decision d = plan_load(asked(50, 32, 1, 1200), load_rates{1.0, 5.0}, busy, load_policy{.margin_ms = 0});
  EXPECT_DOUBLE_EQ(d.wait_ms, 400);
  EXPECT_DOUBLE_EQ(d.estimate_ms, 400 + 50 * 2 + 32 * 20);
  EXPECT_FALSE(d.over_budget);
}

TEST(load_budget, over_budget_drops_the_extra_candidates_first_then_cuts_tokens_to_what_fits) {
  const load_policy policy{.margin_ms = 0};
  // 3 candidates: each step costs 5 + 2 x 1 ms; 100 rows = 100 ms; 128 tokens: 896 ms.
  load_decision d = plan_load(asked(100, 128, 3, 800), load_rates{1.0, 5.0}, lm_load{}, policy);
  EXPECT_TRUE(d.over_budget);
  EXPECT_TRUE(d.candidates_dropped);
  EXPECT_EQ(d.candidates, 1);
  EXPECT_FALSE(d.shortened) << "one candidate of 128 tokens (740 ms) fits: " << d.reason;
  EXPECT_EQ(d.max_tokens, 128);
  // Less time: the tokens are cut to the steps that fit after the prompt.
  d = plan_load(asked(100, 128, 3, 300), load_rates{1.0, 5.0}, lm_load{}, policy);
  EXPECT_TRUE(d.candidates_dropped);
  EXPECT_TRUE(d.shortened);
  EXPECT_EQ(d.max_tokens, 40);  // (300 - 100) / 5
  EXPECT_NE(d.reason.find("40 tokens"), std::string::npos) << d.reason;
}

TEST(load_budget, a_cut_never_goes_below_the_floor_nor_the_trigger_limit) {
  load_decision d = plan_load(asked(1000, 32, 1, 100), load_rates{1.0, 5.0}, lm_load{}, load_policy{.min_tokens = 8});
  EXPECT_TRUE(d.shortened);
  EXPECT_EQ(d.max_tokens, 8);
  // A limit already under the floor stays as it is.
  d = plan_load(asked(1000, 4, 1, 100), load_rates{1.0, 5.0}, lm_load{}, load_policy{.min_tokens = 8});
  EXPECT_TRUE(d.over_budget);
  EXPECT_FALSE(d.shortened);
  EXPECT_EQ(d.max_tokens, 4);
}

TEST(load_budget, the_margin_is_taken_from_the_time_left) {
  // 100 + 32 x 5 = 260 ms: fits 270 ms, not 270 less a margin of 20.
  EXPECT_FALSE(plan_load(asked(100, 32, 1, 270), load_rates{1.0, 5.0}, lm_load{}, load_policy{.margin_ms = 0}).over_budget);
  EXPECT_TRUE(plan_load(asked(100, 32, 1, 270), load_rates{1.0, 5.0}, lm_load{}, load_policy{.margin_ms = 20}).over_budget);
}

TEST(load_budget, off_or_without_rates_nothing_is_degraded) {
  load_decision d = plan_load(asked(1000, 128, 3, 100), load_rates{1.0, 5.0}, lm_load{}, load_policy{.enabled = false});
  EXPECT_TRUE(d.over_budget);
  EXPECT_FALSE(d.shortened);
  EXPECT_FALSE(d.candidates_dropped);
  EXPECT_EQ(d.max_tokens, 128);
  EXPECT_EQ(d.candidates, 3);
  d = plan_load(asked(1000, 128, 3, 100), load_rates{}, lm_load{}, load_policy{});
  EXPECT_FALSE(d.over_budget);
  EXPECT_EQ(d.max_tokens, 128);
}

// ---- The pipeline ----

const std::string k_uri = "file:///w/src/main.py";

std::string source() {
  std::string s = "import os\n\n";
  for (int i = 0; i < 8; ++i)
    s += "def f" + std::to_string(i) + "(self, x):\n    return self.g(x) + " + std::to_string(i) + "\n\n";
  s += "def main():\n    total = 0\n    \n    print(total)\n";
  return s;
}
constexpr int64_t k_line = 28;  // the empty indented line in main()

completion_request request(bool explicit_trigger, std::chrono::milliseconds budget) {
  completion_request r;
  r.uri = k_uri;
  r.text = source();
  r.cursor = {k_line, 4};
  r.explicit_trigger = explicit_trigger;
  r.received = clock::now();
  r.deadline = r.received + budget;
  return r;
}

// Others' work on a shared engine: 3 sequences with 5000 rows waiting at
// 1 ms a row (5 s of wait), 10 ms a step.
constexpr lm_load k_busy{.sequences = 3, .rows_waiting = 5000, .ms_per_step = 10, .ms_per_row = 1, .foreground = 3};

struct fixture {
  std::unique_ptr<pipeline> p;
  fake_backend* be = nullptr;
  explicit fixture(completion_settings s = {}, std::chrono::microseconds per_token = {}) {
    s.stop_rules = false;  // fixed-length generation: the token limit shows
    s.type_through = false;
    auto b = std::make_unique<fake_backend>();
    b->per_token = per_token;
    be = b.get();
    p = std::make_unique<pipeline>(std::move(b), s);
  }
};

TEST(pipeline_under_load, a_request_that_fits_is_untouched) {
  fixture f;
  const completion_result r = f.p->complete(request(false, 10s), {});
  ASSERT_FALSE(r.items.empty());
  EXPECT_FALSE(r.metrics.degraded.any());
  EXPECT_EQ(r.metrics.degraded.max_tokens, 32);
  EXPECT_EQ(r.metrics.tokens_generated, 32);
  EXPECT_GT(f.be->load_calls, 0) << "the engine's load was asked";
}

TEST(pipeline_under_load, a_request_whose_estimate_breaks_its_deadline_gets_fewer_tokens) {
  fixture f(completion_settings{.degrade_min_tokens = 6});
  f.be->scripted_load = k_busy;
  // 2 s left, 5 s of others' rows waiting: the tokens are cut to the floor.
  const completion_result r = f.p->complete(request(false, 2s), {});
  const degradation& d = r.metrics.degraded;
  EXPECT_TRUE(d.shortened);
  EXPECT_FALSE(d.candidates_dropped);
  EXPECT_EQ(d.max_tokens, 6);
  EXPECT_GT(d.estimate_ms, d.left_ms);
  EXPECT_EQ(r.metrics.tokens_generated, 6);
}

TEST(pipeline_under_load, extra_candidates_are_dropped) {
  fixture f;  // explicit invocations: 3 candidates, 128 tokens
  const completion_result calm = f.p->complete(request(true, 10s), {});
  EXPECT_EQ(calm.metrics.candidates, 3);
  f.be->scripted_load = k_busy;
  const completion_result r = f.p->complete(request(true, 2s), {});
  EXPECT_TRUE(r.metrics.degraded.candidates_dropped);
  EXPECT_EQ(r.metrics.degraded.candidates, 1);
  EXPECT_EQ(r.metrics.candidates, 1);
  EXPECT_TRUE(r.metrics.degraded.shortened);
}

TEST(pipeline_under_load, a_slow_engine_alone_shortens_by_its_own_measured_rates) {
  // No shared load: 2 ms a token, measured from the first request; 128
  // tokens cannot fit 150 ms, so the second is cut (the rates are at least
  // the sleep's, whatever the machine).
  fixture f(completion_settings{}, 2ms);
  f.p->complete(request(true, 10s), {});
  const completion_result r = f.p->complete(request(true, 150ms), {});
  EXPECT_TRUE(r.metrics.degraded.shortened);
  EXPECT_LT(r.metrics.degraded.max_tokens, 128);
  EXPECT_LE(r.metrics.tokens_generated, r.metrics.degraded.max_tokens);
}

TEST(pipeline_under_load, background_work_waits_while_others_work_runs_and_is_counted) {
  fixture f(completion_settings{.prefetch = true});
  const completion_result first = f.p->complete(request(false, 10s), {});
  ASSERT_FALSE(first.items.empty());
  ASSERT_GT(f.p->pending_background(), 0u) << "the prefetch is queued";
  const int64_t evaluated = f.be->stats->evaluated;
  f.be->scripted_load = k_busy;
  EXPECT_FALSE(f.p->background_step({}));
  EXPECT_FALSE(f.p->background_step({}));
  EXPECT_EQ(f.be->stats->evaluated, evaluated) << "nothing ran";
  EXPECT_GT(f.p->pending_background(), 0u) << "the work is kept";
  // The pauses go out with the next answer.
  const completion_result next = f.p->complete(request(false, 10s), {});
  EXPECT_EQ(next.metrics.degraded.background_paused, 2);
  // The engine free again: the background work runs.
  f.be->scripted_load = {};
  f.p->background_step({});
  EXPECT_GT(f.be->stats->evaluated, evaluated);
  EXPECT_EQ(f.p->complete(request(false, 10s), {}).metrics.degraded.background_paused, 0);
}

TEST(pipeline_under_load, others_background_work_does_not_pause_background_work) {
  fixture f(completion_settings{.prefetch = true});
  const completion_result first = f.p->complete(request(false, 10s), {});
  ASSERT_FALSE(first.items.empty());
  ASSERT_GT(f.p->pending_background(), 0u) << "the prefetch is queued";
  const int64_t evaluated = f.be->stats->evaluated;
  // Other sequences run, all of them background work: this one's runs beside them.
  f.be->scripted_load = lm_load{.sequences = 2, .rows_waiting = 0, .ms_per_step = 10, .ms_per_row = 1, .foreground = 0};
  f.p->background_step({});
  EXPECT_GT(f.be->stats->evaluated, evaluated);
  EXPECT_EQ(f.p->complete(request(false, 10s), {}).metrics.degraded.background_paused, 0);
}

TEST(pipeline_under_load, degrade_off_keeps_the_settings_and_the_background) {
  fixture f(completion_settings{.prefetch = true, .degrade = false});
  f.be->scripted_load = k_busy;
  const completion_result r = f.p->complete(request(true, 2s), {});
  EXPECT_FALSE(r.metrics.degraded.any());
  EXPECT_EQ(r.metrics.candidates, 3);
  EXPECT_EQ(r.metrics.degraded.max_tokens, 128);
  const int64_t evaluated = f.be->stats->evaluated;
  ASSERT_GT(f.p->pending_background(), 0u);
  f.p->background_step({});
  EXPECT_GT(f.be->stats->evaluated, evaluated) << "the background ran under load";
}

TEST(pipeline_under_load, explain_says_what_each_trigger_would_get_now_and_why) {
  fixture f;
  completion_request req = request(true, 2000ms);
  req.automatic_budget = 400ms;
  std::optional<prompt_explanation> calm = f.p->explain(req);
  ASSERT_TRUE(calm);
  ASSERT_EQ(calm->load.size(), 2u);
  EXPECT_EQ(calm->load[0].trigger, "automatic");
  EXPECT_EQ(calm->load[1].trigger, "explicit");
  for (const load_explanation& l : calm->load) {
    EXPECT_FALSE(l.degraded) << l.reason;  // nothing measured, no load: nothing to estimate
    EXPECT_FALSE(l.background_paused);
  }
  EXPECT_EQ(calm->load[0].max_tokens, 32);
  EXPECT_EQ(calm->load[1].candidates, 3);

  f.be->scripted_load = k_busy;
  std::optional<prompt_explanation> busy = f.p->explain(req);
  ASSERT_TRUE(busy);
  ASSERT_EQ(busy->load.size(), 2u);
  const load_explanation& a = busy->load[0];
  EXPECT_TRUE(a.over_budget);
  EXPECT_TRUE(a.degraded);
  EXPECT_TRUE(a.shortened);
  EXPECT_EQ(a.max_tokens, 8);  // the default floor
  EXPECT_DOUBLE_EQ(a.wait_ms, 5000);
  EXPECT_GT(a.prompt_rows, 100) << "nothing cached yet";
  EXPECT_TRUE(a.background_paused);
  EXPECT_NE(a.reason.find("breaks"), std::string::npos) << a.reason;
  const load_explanation& e = busy->load[1];
  EXPECT_TRUE(e.candidates_dropped);
  EXPECT_EQ(e.candidates, 1);
  // Explaining changed nothing: the request runs as the plan said.
  const completion_result r = f.p->complete(request(false, 400ms), {});
  EXPECT_TRUE(r.metrics.degraded.shortened);
  EXPECT_EQ(r.metrics.degraded.max_tokens, 8);
}

TEST(pipeline_under_load, explain_with_degrade_off_says_over_budget_but_not_degraded) {
  fixture f(completion_settings{.degrade = false});
  f.be->scripted_load = k_busy;
  completion_request req = request(true, 2000ms);
  req.automatic_budget = 400ms;
  std::optional<prompt_explanation> ex = f.p->explain(req);
  ASSERT_TRUE(ex);
  ASSERT_EQ(ex->load.size(), 2u);
  EXPECT_TRUE(ex->load[0].over_budget);
  EXPECT_FALSE(ex->load[0].degraded);
  EXPECT_FALSE(ex->load[0].shortened);
  EXPECT_FALSE(ex->load[0].background_paused);
  EXPECT_NE(ex->load[0].reason.find("completion.degrade is off"), std::string::npos) << ex->load[0].reason;
}

}  // namespace
