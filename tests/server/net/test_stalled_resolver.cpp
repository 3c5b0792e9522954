// The HTTP client when the system's resolver does not answer
// (tests/stalled_resolver.h: each scenario runs in a child whose
// /etc/resolv.conf names a DNS server on loopback that never replies, so the
// real getaddrinfo blocks for 30 s): a request returns at its connect timeout
// and at once on cancellation, requests for the same name share one lookup
// thread, and names past the cap of stalled lookups are refused at once.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "server/net/http_client.h"
#include "server/net/name_lookup.h"
#include "tests/stalled_resolver.h"

namespace qf::net {
namespace {

using namespace std::chrono_literals;
using steady = std::chrono::steady_clock;

std::string stalled_url(const std::string& name = qf::test::stalled_name) { return "http://" + name + ":8080/x"; }

struct outcome {
  error_kind kind = error_kind::protocol;
  std::string message;
  steady::duration took{};
  bool threw = false;
};

outcome fetch_outcome(const std::string& url, const request_options& o) {
  outcome r;
  std::string got;
  const auto t0 = steady::now();
  try {
    fetch_to_string(url, o, got);
  } catch (const http_error& e) {
    r.threw = true;
    r.kind = e.kind();
    r.message = e.what();
  }
  r.took = steady::now() - t0;
  return r;
}

TEST(DISABLED_StalledResolverChild, ReturnsAtTheConnectTimeout) {
  QF_ENTER_STALLED_RESOLVER();
  request_options o;
  o.connect_timeout = 300ms;
  outcome r = fetch_outcome(stalled_url(), o);
  ASSERT_TRUE(r.threw);
  if (r.kind == error_kind::resolve) return qf::test::report_resolver_answered(r.message);
  EXPECT_EQ(r.kind, error_kind::timeout) << r.message;
  EXPECT_NE(r.message.find("resolver did not answer"), std::string::npos) << r.message;
  EXPECT_LT(r.took, 3s) << "the stalled lookup held the request";
  EXPECT_EQ(running_lookups(), 1u);  // getaddrinfo is still blocked: the stall was real
  // Another request for the name joins that lookup rather than starting a thread.
  r = fetch_outcome(stalled_url(), o);
  EXPECT_EQ(r.kind, error_kind::timeout) << r.message;
  EXPECT_LT(r.took, 3s);
  EXPECT_EQ(running_lookups(), 1u);
}

TEST(DISABLED_StalledResolverChild, CancellationIsSeenDuringTheLookup) {
  QF_ENTER_STALLED_RESOLVER();
  std::atomic<bool> cancel{false};
  request_options o;
  o.connect_timeout = 60s;
  o.cancel = &cancel;
  std::thread t([&] {
    std::this_thread::sleep_for(200ms);
    cancel = true;
  });
  outcome r = fetch_outcome(stalled_url(), o);
  t.join();
  ASSERT_TRUE(r.threw);
  if (r.kind == error_kind::resolve) return qf::test::report_resolver_answered(r.message);
  EXPECT_EQ(r.kind, error_kind::cancelled) << r.message;
  EXPECT_LT(r.took, 5s) << "cancellation waited for the stalled lookup";
  // should_cancel (a deadline, as remote completions use) the same way.
  request_options d;
  d.connect_timeout = 60s;
  const auto deadline = steady::now() + 300ms;
  d.should_cancel = [&] { return steady::now() >= deadline; };
  r = fetch_outcome(stalled_url("other." + std::string(qf::test::stalled_name)), d);
  EXPECT_EQ(r.kind, error_kind::cancelled) << r.message;
  EXPECT_LT(r.took, 5s);
  EXPECT_EQ(running_lookups(), 2u);
}

TEST(DISABLED_StalledResolverChild, StalledLookupsAreCapped) {
  QF_ENTER_STALLED_RESOLVER();
  request_options o;
  o.connect_timeout = 50ms;
  for (size_t i = 0; i < max_running_lookups; ++i) {
    const std::string host = std::string("n").append(std::to_string(i)).append(".").append(qf::test::stalled_name);
    outcome r = fetch_outcome(stalled_url(host), o);
    if (r.kind == error_kind::resolve) return qf::test::report_resolver_answered(r.message);
    ASSERT_EQ(r.kind, error_kind::timeout) << r.message;
  }
  EXPECT_EQ(running_lookups(), max_running_lookups);
  outcome r = fetch_outcome(stalled_url("one-more." + std::string(qf::test::stalled_name)), o);
  EXPECT_EQ(r.kind, error_kind::resolve) << r.message;
  EXPECT_NE(r.message.find("still waiting for the system's resolver"), std::string::npos) << r.message;
  // A name already being looked up still joins its lookup (and times out as before).
  r = fetch_outcome(stalled_url("n0." + std::string(qf::test::stalled_name)), o);
  EXPECT_EQ(r.kind, error_kind::timeout) << r.message;
  // IP literals need no lookup at all.
  r = fetch_outcome("http://127.0.0.1:1/x", o);
  EXPECT_EQ(r.kind, error_kind::connect) << r.message;
}

TEST(StalledResolver, ARequestReturnsAtItsConnectTimeout) {
  qf::test::run_stalled_resolver_test("StalledResolverChild.ReturnsAtTheConnectTimeout");
}
TEST(StalledResolver, CancellationIsSeenDuringTheLookup) {
  qf::test::run_stalled_resolver_test("StalledResolverChild.CancellationIsSeenDuringTheLookup");
}
TEST(StalledResolver, StalledLookupsAreCapped) {
  qf::test::run_stalled_resolver_test("StalledResolverChild.StalledLookupsAreCapped");
}

}  // namespace
}  // namespace qf::net
