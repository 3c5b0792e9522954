// routes.underLoad: an automatic request whose first source (the real
// completion pipeline on the scripted engine, with a scripted load) estimates
// that it would break its deadline goes to the underLoad route first; counted
// as that source's skipped.load and as the answer's degraded.rerouted, and
// said by the explanation. Explicit requests, an engine without load and
// completion.degrade off are not rerouted. The settings: underLoad is read,
// optional, and checked like the other routes.
#include <gtest/gtest.h>

#include <boost/json.hpp>

#include "server/completion/pipeline/pipeline.h"
#include "server/core/settings.h"
#include "server/routing/router.h"
#include "tests/server/completion/fake_lm.h"
#include "tests/server/routing/test_kind.h"

namespace qf::server::routing {
namespace {

namespace json = boost::json;
using namespace std::chrono_literals;
using completion::completion_settings;
using completion::pipeline;
using qf::test::fake_backend;

constexpr completion::lm_load k_busy{.sequences = 3, .rows_waiting = 5000, .ms_per_step = 10, .ms_per_row = 1};

struct routed {
  std::shared_ptr<source_board> board = std::make_shared<source_board>();
  std::unique_ptr<router> r;
  fake_backend* big_engine = nullptr;

  explicit routed(completion_settings big_settings = {}, bool under_load = true) {
    auto engine = std::make_unique<fake_backend>();
    big_engine = engine.get();
    std::vector<routed_source> sources;
    sources.push_back(routed_source{"big", "local", true, std::make_unique<pipeline>(std::move(engine), big_settings), {}});
    testing::test_options small;
    small.text = "SMALL";
    sources.push_back(routed_source{"small", "test-local", true, std::make_unique<testing::test_source>(small), {}});
    router_hooks hooks;
    hooks.board = board;
    board->set_sources({{"big", "local", true, {}}, {"small", "test-local", true, {}}});
    r = std::make_unique<router>(std::move(sources), std::vector<std::string>{"big"},
                                 std::vector<std::string>{"big"}, hooks);
    if (under_load) r->set_under_load({"small"});
  }
  std::uint64_t skipped_load(const std::string& name) {
    const json::value st = board->stats_json();
    for (const auto& v : st.as_array())
      if (v.at("name").as_string() == name) return v.at("skipped").at("load").as_uint64();
    ADD_FAILURE() << "no stats for " << name;
    return 0;
  }
};

completion_request request(bool explicit_trigger, std::chrono::milliseconds budget) {
  completion_request r;
  r.uri = "file:///w/main.py";
  r.text = std::string("def main():\n    total = 0\n    \n    print(total)\n");
  r.cursor = {2, 4};
  r.explicit_trigger = explicit_trigger;
  r.received = clock::now();
  r.deadline = r.received + budget;
  return r;
}

std::string first_text(const completion_result& r) { return r.items.empty() ? "" : r.items[0].insert_text; }

TEST(RouterUnderLoad, AnAutomaticRequestThatWouldBreakItsDeadlineGoesToTheUnderLoadSource) {
  routed rt;
  cancel_token c;
  // No load: the automatic route's own source answers.
  completion_result calm = rt.r->complete(request(false, 400ms), c);
  EXPECT_NE(first_text(calm), "SMALL");
  EXPECT_FALSE(calm.metrics.degraded.rerouted);
  EXPECT_EQ(rt.skipped_load("big"), 0u);
  // Others' work on big's engine: 5 s of rows waiting for a 400 ms budget.
  rt.big_engine->scripted_load = k_busy;
  completion_result busy = rt.r->complete(request(false, 400ms), c);
  EXPECT_EQ(first_text(busy), "SMALL");
  EXPECT_TRUE(busy.metrics.degraded.rerouted);
  EXPECT_EQ(rt.skipped_load("big"), 1u);
  // An explicit request is not rerouted (degraded on big instead).
  completion_result expl = rt.r->complete(request(true, 400ms), c);
  EXPECT_NE(first_text(expl), "SMALL");
  EXPECT_FALSE(expl.metrics.degraded.rerouted);
  EXPECT_TRUE(expl.metrics.degraded.candidates_dropped);
  EXPECT_EQ(rt.skipped_load("big"), 1u);
}

TEST(RouterUnderLoad, TheExplanationNamesTheSourceThatWouldAnswer) {
  routed rt;
  rt.big_engine->scripted_load = k_busy;
  completion_request req = request(true, 2000ms);
  req.automatic_budget = 400ms;
  std::optional<prompt_explanation> ex = rt.r->explain(req);
  ASSERT_TRUE(ex);
  ASSERT_EQ(ex->load.size(), 2u);
  EXPECT_EQ(ex->load[0].trigger, "automatic");
  EXPECT_TRUE(ex->load[0].degraded);
  EXPECT_EQ(ex->load[0].rerouted_to, "small");
  EXPECT_EQ(ex->load[1].trigger, "explicit");
  EXPECT_TRUE(ex->load[1].rerouted_to.empty()) << "explicit requests are not rerouted";
}

TEST(RouterUnderLoad, WithoutUnderLoadOrWithDegradeOffNothingIsRerouted) {
  cancel_token c;
  {
    routed rt(completion_settings{}, /*under_load=*/false);
    rt.big_engine->scripted_load = k_busy;
    completion_result r = rt.r->complete(request(false, 400ms), c);
    EXPECT_NE(first_text(r), "SMALL");
    EXPECT_FALSE(r.metrics.degraded.rerouted);
    EXPECT_TRUE(r.metrics.degraded.shortened) << "degraded on its own source instead";
  }
  {
    routed rt(completion_settings{.degrade = false});
    rt.big_engine->scripted_load = k_busy;
    completion_result r = rt.r->complete(request(false, 400ms), c);
    EXPECT_NE(first_text(r), "SMALL");
    EXPECT_FALSE(r.metrics.degraded.any());
    EXPECT_EQ(rt.skipped_load("big"), 0u);
  }
}

TEST(RouterUnderLoad, UnderLoadIsReadAndCheckedLikeTheOtherRoutes) {
  auto parse = [](const char* routes) {
    return parse_settings(json::parse(std::string(R"({"quickfill":{"sources":[{"name":"big","kind":"local"},)") +
                                      R"({"name":"small","kind":"local"}],"routes":)" + routes + "}}"));
  };
  parsed_settings p = parse(R"({"automatic":["big"],"underLoad":["small"]})");
  EXPECT_TRUE(p.problems.empty());
  EXPECT_EQ(p.values.routing.under_load, std::vector<std::string>{"small"});
  EXPECT_TRUE(parse(R"({"automatic":["big"]})").values.routing.under_load.empty()) << "absent: none";
  for (const char* bad : {R"({"underLoad":["nobody"]})", R"({"underLoad":[]})", R"({"underLoad":"small"})"}) {
    parsed_settings b = parse(bad);
    ASSERT_FALSE(b.problems.empty()) << bad;
    EXPECT_NE(b.problems[0].message.find("routes.underLoad"), std::string::npos) << b.problems[0].message;
  }
}

}  // namespace
}  // namespace qf::server::routing
