// The circuit breaker's states, driven by a clock the test holds.
#include <gtest/gtest.h>

#include "server/remote/circuit_breaker.h"

using qf::remote::circuit_breaker;
using state = circuit_breaker::state;
using namespace std::chrono_literals;

TEST(CircuitBreaker, OpensAfterThresholdFailuresInARow) {
  circuit_breaker b({3, 1000ms});
  const auto t = circuit_breaker::clock::now();
  EXPECT_TRUE(b.allow(t));
  b.record_failure(t);
  b.record_failure(t);
  b.record_success();  // a success in between resets the count
  b.record_failure(t);
  b.record_failure(t);
  EXPECT_EQ(b.current(t), state::closed);
  EXPECT_TRUE(b.allow(t));
  b.record_failure(t);
  EXPECT_EQ(b.current(t), state::open);
  EXPECT_FALSE(b.allow(t + 999ms));
}

TEST(CircuitBreaker, HalfOpenLetsOneProbeThrough) {
  circuit_breaker b({1, 1000ms});
  const auto t = circuit_breaker::clock::now();
  b.record_failure(t);
  EXPECT_FALSE(b.allow(t + 500ms));
  EXPECT_EQ(b.current(t + 1000ms), state::half_open);
  EXPECT_TRUE(b.allow(t + 1000ms));   // the probe
  EXPECT_FALSE(b.allow(t + 1001ms));  // nothing else while it is out
  b.record_success();
  EXPECT_EQ(b.current(t + 1001ms), state::closed);
  EXPECT_TRUE(b.allow(t + 1001ms));
}

TEST(CircuitBreaker, AFailedProbeOpensForAnotherCoolDown) {
  circuit_breaker b({5, 1000ms});
  const auto t = circuit_breaker::clock::now();
  for (int i = 0; i < 5; ++i) b.record_failure(t);
  ASSERT_TRUE(b.allow(t + 1000ms));
  b.record_failure(t + 1200ms);  // one failure suffices in half-open
  EXPECT_EQ(b.current(t + 1300ms), state::open);
  EXPECT_FALSE(b.allow(t + 2100ms));
  EXPECT_TRUE(b.allow(t + 2200ms));
}

TEST(CircuitBreaker, AnAbandonedProbeMayGoAgain) {
  circuit_breaker b({1, 100ms});
  const auto t = circuit_breaker::clock::now();
  b.record_failure(t);
  ASSERT_TRUE(b.allow(t + 100ms));
  EXPECT_FALSE(b.allow(t + 101ms));
  b.record_abandoned();
  EXPECT_TRUE(b.allow(t + 102ms));
}
