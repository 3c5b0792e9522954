// A remote completion whose endpoint's name the system resolver never
// answers (tests/stalled_resolver.h: in a child with its own
// /etc/resolv.conf, the real getaddrinfo blocks for 30 s): complete() returns
// by the request's deadline, and at once when the request is cancelled, even
// with a connect timeout far longer than both.
#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "tests/server/remote/remote_test_util.h"
#include "tests/stalled_resolver.h"

using namespace qf::remote;
using namespace qf::remote::testing;

namespace {

using steady = std::chrono::steady_clock;

const std::string doc_text = "import os\n\nvalue = ";

std::unique_ptr<remote_source> stalled_source() {
  return make_source(std::string(R"({"kind": "openai", "retries": 0, "connectTimeoutMs": 60000, "endpoints": ["http://)") +
                     qf::test::stalled_name + R"(:8080"]})");
}

TEST(DISABLED_RemoteStalledResolverChild, ReturnsByTheDeadline) {
  QF_ENTER_STALLED_RESOLVER();
  auto s = stalled_source();
  ASSERT_TRUE(s);
  const auto t0 = steady::now();
  auto o = run(*s, make_request(doc_text, 2, 8, 400ms));
  const auto took = steady::now() - t0;
  if (o.kind == "unavailable" && o.message.find("cannot resolve") != std::string::npos)
    return qf::test::report_resolver_answered(o.message);
  EXPECT_EQ(o.kind, "timeout") << o.message;
  EXPECT_LT(took, 3s) << "the stalled lookup held the completion past its deadline";
  EXPECT_EQ(s->attempts(), 1u);
}

TEST(DISABLED_RemoteStalledResolverChild, CancellationIsSeenDuringTheLookup) {
  QF_ENTER_STALLED_RESOLVER();
  auto s = stalled_source();
  ASSERT_TRUE(s);
  qf::cancel_source cs;
  std::thread canceller([&] {
    std::this_thread::sleep_for(300ms);
    cs.cancel(qf::cancel_reason::content_modified);
  });
  const auto t0 = steady::now();
  auto o = run(*s, make_request(doc_text, 2, 8, 60s), cs.token());
  const auto took = steady::now() - t0;
  canceller.join();
  if (o.kind == "unavailable" && o.message.find("cannot resolve") != std::string::npos)
    return qf::test::report_resolver_answered(o.message);
  EXPECT_EQ(o.kind, "") << o.message;  // cancelled work is not a failure of the source
  EXPECT_TRUE(o.result.items.empty());
  EXPECT_EQ(o.result.metrics.tokens_evaluated, 0);  // nothing was sent
  EXPECT_LT(took, 5s) << "the cancellation waited for the stalled lookup";
}

TEST(RemoteStalledResolver, ACompletionReturnsByItsDeadline) {
  qf::test::run_stalled_resolver_test("RemoteStalledResolverChild.ReturnsByTheDeadline");
}
TEST(RemoteStalledResolver, CancellationIsSeenDuringTheLookup) {
  qf::test::run_stalled_resolver_test("RemoteStalledResolverChild.CancellationIsSeenDuringTheLookup");
}

}  // namespace
