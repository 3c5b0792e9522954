// A source's rolling token quota: tokens used in the last hour and the last
// day, in one-minute buckets (a day is 1440 of them), against the limits of
// its settings (0: no limit). Spent when either window is at or over its
// limit; it refills as old minutes leave the window. take_notice() is true
// once per spend: the first time it is asked after the quota became spent,
// and again only after the quota has refilled and been spent anew.
// Not thread-safe: the source board locks around it.
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <string>
#include <utility>

#include "server/routing/routing_settings.h"

namespace qf::server::routing {

class token_quota {
 public:
  using clock = std::chrono::steady_clock;

  void set_limits(const quota_limits& l) { limits_ = l; }
  const quota_limits& limits() const { return limits_; }
  void record(std::int64_t tokens, clock::time_point now);
  std::int64_t used_last_hour(clock::time_point now);
  std::int64_t used_last_day(clock::time_point now);
  bool spent(clock::time_point now);
  // "1200 of 1000 tokens in the last hour" (empty when not spent).
  std::string spent_reason(clock::time_point now);
  bool take_notice(clock::time_point now);

 private:
  void prune(clock::time_point now);
  std::int64_t minute_of(clock::time_point t) const;
  std::int64_t sum_since(std::int64_t first_minute) const;

  quota_limits limits_;
  std::deque<std::pair<std::int64_t, std::int64_t>> minutes_;  // (minute index, tokens), oldest first
  bool noticed_ = false;
};

}  // namespace qf::server::routing
