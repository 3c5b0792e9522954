// Rolling token quotas (see token_quota.h).
#include "server/routing/token_quota.h"

namespace qf::server::routing {

namespace {
constexpr std::int64_t k_hour = 60, k_day = 1440;  // in minutes
}

std::int64_t token_quota::minute_of(clock::time_point t) const {
  return std::chrono::duration_cast<std::chrono::minutes>(t.time_since_epoch()).count();
}

void token_quota::prune(clock::time_point now) {
  const std::int64_t oldest = minute_of(now) - k_day + 1;
  while (!minutes_.empty() && minutes_.front().first < oldest) minutes_.pop_front();
}

std::int64_t token_quota::sum_since(std::int64_t first_minute) const {
  std::int64_t n = 0;
  for (auto it = minutes_.rbegin(); it != minutes_.rend() && it->first >= first_minute; ++it) n += it->second;
  return n;
}

void token_quota::record(std::int64_t tokens, clock::time_point now) {
  if (tokens <= 0) return;
  prune(now);
  const std::int64_t m = minute_of(now);
  if (!minutes_.empty() && minutes_.back().first == m)
    minutes_.back().second += tokens;
  else
    minutes_.emplace_back(m, tokens);
}

std::int64_t token_quota::used_last_hour(clock::time_point now) {
  prune(now);
  return sum_since(minute_of(now) - k_hour + 1);
}

std::int64_t token_quota::used_last_day(clock::time_point now) {
  prune(now);
  return sum_since(minute_of(now) - k_day + 1);
}

std::string token_quota::spent_reason(clock::time_point now) {
  if (limits_.tokens_per_hour > 0) {
    const std::int64_t h = used_last_hour(now);
    if (h >= limits_.tokens_per_hour)
      return std::to_string(h) + " of " + std::to_string(limits_.tokens_per_hour) + " tokens used in the last hour";
  }
  if (limits_.tokens_per_day > 0) {
    const std::int64_t d = used_last_day(now);
    if (d >= limits_.tokens_per_day)
      return std::to_string(d) + " of " + std::to_string(limits_.tokens_per_day) + " tokens used in the last day";
  }
  return {};
}

bool token_quota::spent(clock::time_point now) {
  const bool s = !spent_reason(now).empty();
  if (!s) noticed_ = false;  // refilled: the next spend is told again
  return s;
}

bool token_quota::take_notice(clock::time_point now) {
  if (!spent(now) || noticed_) return false;
  noticed_ = true;
  return true;
}

}  // namespace qf::server::routing
