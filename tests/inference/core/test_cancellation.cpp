// cancel_token: sources, links and deadlines. A token with a deadline reads
// as cancelled (reason deadline) once the clock passes it, with no thread
// involved; a reason set on a source, own or linked, wins over the deadline.
#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "inference/core/cancellation.h"

namespace {

using qf::cancel_reason;
using qf::cancel_source;
using qf::cancel_token;
using clk = cancel_token::clock;

TEST(cancel_token, default_token_is_never_cancelled) {
  const cancel_token t;
  EXPECT_FALSE(t.is_cancelled());
  EXPECT_EQ(t.reason(), cancel_reason::none);
  EXPECT_FALSE(t.has_deadline());
  EXPECT_EQ(t.deadline(), clk::time_point::max());
}

TEST(cancel_token, first_reason_set_on_the_source_wins) {
  cancel_source src;
  const cancel_token t = src.token();
  EXPECT_FALSE(t.is_cancelled());
  EXPECT_TRUE(src.cancel(cancel_reason::content_modified));
  EXPECT_FALSE(src.cancel(cancel_reason::cancelled));
  EXPECT_TRUE(t.is_cancelled());
  EXPECT_EQ(t.reason(), cancel_reason::content_modified);
}

TEST(cancel_token, a_passed_deadline_reads_as_cancelled_with_reason_deadline) {
  cancel_source src;
  const cancel_token t = src.token().with_deadline(clk::now() - std::chrono::milliseconds(1));
  EXPECT_TRUE(t.has_deadline());
  EXPECT_TRUE(t.is_cancelled());
  EXPECT_TRUE(static_cast<bool>(t));
  EXPECT_EQ(t.reason(), cancel_reason::deadline);
  EXPECT_FALSE(src.is_cancelled());  // the source itself is untouched
  const cancel_token bare = cancel_token().with_deadline(clk::now());
  EXPECT_EQ(bare.reason(), cancel_reason::deadline);
}

TEST(cancel_token, a_deadline_passes_while_the_only_thread_polls) {
  const auto d = clk::now() + std::chrono::milliseconds(20);
  const cancel_token t = cancel_token().with_deadline(d);
  EXPECT_FALSE(t.is_cancelled());
  EXPECT_EQ(t.reason(), cancel_reason::none);
  while (!t.is_cancelled()) std::this_thread::yield();
  EXPECT_GE(clk::now(), d);  // never early
  EXPECT_EQ(t.reason(), cancel_reason::deadline);
}

TEST(cancel_token, a_deadline_only_tightens) {
  const auto now = clk::now();
  const cancel_token t = cancel_token().with_deadline(now + std::chrono::hours(1));
  EXPECT_EQ(t.with_deadline(now + std::chrono::hours(2)).deadline(), now + std::chrono::hours(1));
  EXPECT_EQ(t.with_deadline(now - std::chrono::seconds(1)).deadline(), now - std::chrono::seconds(1));
  EXPECT_FALSE(t.with_deadline(clk::time_point::max()).is_cancelled());
  EXPECT_FALSE(cancel_token().with_deadline(clk::time_point::max()).has_deadline());
  // Copies keep it.
  const cancel_token passed = cancel_token().with_deadline(now - std::chrono::seconds(1));
  const cancel_token copy = passed;
  EXPECT_EQ(copy.reason(), cancel_reason::deadline);
}

TEST(cancel_token, a_source_reason_wins_over_a_passed_deadline) {
  cancel_source src;
  const cancel_token t = src.token().with_deadline(clk::now() - std::chrono::milliseconds(1));
  EXPECT_EQ(t.reason(), cancel_reason::deadline);
  src.cancel(cancel_reason::content_modified);
  EXPECT_EQ(t.reason(), cancel_reason::content_modified);
}

TEST(cancel_token, a_linked_parent_cancel_wins_over_the_deadline) {
  cancel_source own, parent;
  const cancel_token t =
      own.token().linked_to(parent.token()).with_deadline(clk::now() - std::chrono::milliseconds(1));
  EXPECT_TRUE(t.is_cancelled());
  EXPECT_EQ(t.reason(), cancel_reason::deadline);
  parent.cancel(cancel_reason::cancelled);
  EXPECT_EQ(t.reason(), cancel_reason::cancelled);
  // The order of linking and adding the deadline does not matter.
  cancel_source own2, parent2;
  const cancel_token u =
      own2.token().with_deadline(clk::now() - std::chrono::milliseconds(1)).linked_to(parent2.token());
  parent2.cancel(cancel_reason::content_modified);
  EXPECT_EQ(u.reason(), cancel_reason::content_modified);
}

TEST(cancel_token, linking_takes_the_parents_deadline_when_earlier) {
  const auto now = clk::now();
  cancel_source own;
  const cancel_token parent = cancel_token().with_deadline(now - std::chrono::milliseconds(1));
  const cancel_token t = own.token().with_deadline(now + std::chrono::hours(1)).linked_to(parent);
  EXPECT_EQ(t.deadline(), now - std::chrono::milliseconds(1));
  EXPECT_EQ(t.reason(), cancel_reason::deadline);
  const cancel_token later = own.token().linked_to(cancel_token().with_deadline(now + std::chrono::hours(2)));
  EXPECT_FALSE(later.is_cancelled());
  EXPECT_EQ(later.deadline(), now + std::chrono::hours(2));
}

TEST(cancel_token, linked_token_follows_either_source_and_keeps_its_own_reason_first) {
  cancel_source own, parent;
  const cancel_token t = own.token().linked_to(parent.token());
  EXPECT_FALSE(t.is_cancelled());
  EXPECT_EQ(t.reason(), cancel_reason::none);
  own.cancel(cancel_reason::preempted);
  parent.cancel(cancel_reason::cancelled);
  EXPECT_EQ(t.reason(), cancel_reason::preempted);
  cancel_source own2;
  const cancel_token u = own2.token().linked_to(parent.token());
  EXPECT_TRUE(u.is_cancelled());
  EXPECT_EQ(u.reason(), cancel_reason::cancelled);
  EXPECT_FALSE(cancel_token().linked_to(cancel_token()).is_cancelled());
  // A parent cancelled from another thread is seen at the next poll.
  cancel_source own3, parent3;
  const cancel_token v = own3.token().linked_to(parent3.token());
  std::thread canceller([&] { parent3.cancel(cancel_reason::content_modified); });
  canceller.join();
  EXPECT_TRUE(v.is_cancelled());
  EXPECT_EQ(v.reason(), cancel_reason::content_modified);
}

}  // namespace
