// The sources' health and meter (see source_board.h).
#include "server/routing/source_board.h"

#include <algorithm>
#include <cmath>

#include <boost/json.hpp>

namespace qf::server::routing {

namespace json = boost::json;

namespace {

constexpr std::size_t k_latency_history = 512;
constexpr std::size_t k_recent_calls = 8;

// Nearest-rank percentile of sorted values.
double rank(const std::vector<double>& sorted, double q) {
  if (sorted.empty()) return 0;
  std::size_t k = static_cast<std::size_t>(std::ceil(q * static_cast<double>(sorted.size())));
  return sorted[std::clamp<std::size_t>(k, 1, sorted.size()) - 1];
}

json::array names(const std::vector<std::string>& v) {
  json::array a;
  for (const auto& s : v) a.push_back(json::value(s));
  return a;
}

}  // namespace

source_board::entry* source_board::find(const std::string& name) {
  for (auto& e : entries_)
    if (e.src.name == name) return &e;
  return nullptr;
}

const source_board::entry* source_board::find(const std::string& name) const {
  for (const auto& e : entries_)
    if (e.src.name == name) return &e;
  return nullptr;
}

void source_board::set_sources(const std::vector<board_source>& sources) {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<entry> next;
  for (const auto& s : sources) {
    entry e;
    if (entry* old = find(s.name)) {
      e = std::move(*old);
      if (e.src.kind != s.kind) e = entry{};  // another source under the same name starts afresh
    }
    e.src = s;
    e.quota.set_limits(s.quota);
    e.state = "starting";
    e.detail.clear();
    next.push_back(std::move(e));
  }
  entries_ = std::move(next);
}

void source_board::set_routes(std::vector<std::string> automatic, std::vector<std::string> explicit_route) {
  std::lock_guard<std::mutex> lock(mu_);
  automatic_ = std::move(automatic);
  explicit_ = std::move(explicit_route);
}

void source_board::set_state(const std::string& name, const std::string& state, const std::string& detail,
                             const std::string& last_error) {
  std::lock_guard<std::mutex> lock(mu_);
  if (entry* e = find(name)) {
    e->state = state;
    e->detail = detail;
    if (!last_error.empty()) e->last_error = last_error;
  }
}

void source_board::record_call(const std::string& name, const call_record& c, clock::time_point now) {
  std::lock_guard<std::mutex> lock(mu_);
  entry* e = find(name);
  if (!e) return;
  ++e->requests;
  e->prompt_tokens += c.prompt_tokens;
  e->completion_tokens += c.completion_tokens;
  e->quota.record(c.prompt_tokens + c.completion_tokens, now);
  if (c.cancelled) {
    ++e->cancelled;
  } else if (c.ok) {
    ++e->answered;
    e->latencies.push_back(c.latency_ms);
    while (e->latencies.size() > k_latency_history) e->latencies.pop_front();
  } else {
    ++e->errors;
    e->last_error = c.error;
  }
}

void source_board::record_skip(const std::string& name, skip_reason why) {
  std::lock_guard<std::mutex> lock(mu_);
  entry* e = find(name);
  if (!e) return;
  switch (why) {
    case skip_reason::down: ++e->skipped_down; break;
    case skip_reason::deadline: ++e->skipped_deadline; break;
    case skip_reason::quota: ++e->skipped_quota; break;
    case skip_reason::load: ++e->skipped_load; break;
  }
}

double source_board::recent_latency_ms(const std::string& name) const {
  std::lock_guard<std::mutex> lock(mu_);
  const entry* e = find(name);
  if (!e || e->latencies.empty()) return 0;
  const std::size_t n = std::min(k_recent_calls, e->latencies.size());
  std::vector<double> last(e->latencies.end() - static_cast<std::ptrdiff_t>(n), e->latencies.end());
  std::sort(last.begin(), last.end());
  return rank(last, 0.5);
}

bool source_board::quota_spent(const std::string& name, clock::time_point now, std::string* reason, bool* notice) {
  std::lock_guard<std::mutex> lock(mu_);
  entry* e = find(name);
  if (notice) *notice = false;
  if (!e) return false;
  const bool spent = e->quota.spent(now);
  if (spent) {
    if (reason) *reason = e->quota.spent_reason(now);
    if (notice) *notice = e->quota.take_notice(now);
  }
  return spent;
}

json::value source_board::status_json() const {
  std::lock_guard<std::mutex> lock(mu_);
  json::array sources;
  for (const auto& e : entries_) {
    json::object o{{"name", e.src.name},   {"kind", e.src.kind},   {"local", e.src.local},
                   {"state", e.state},     {"detail", e.detail},   {"lastError", e.last_error}};
    sources.push_back(std::move(o));
  }
  return json::object{{"sources", std::move(sources)},
                      {"routes", json::object{{"automatic", names(automatic_)}, {"explicit", names(explicit_)}}}};
}

json::value source_board::stats_json(clock::time_point now) {
  std::lock_guard<std::mutex> lock(mu_);
  json::array out;
  for (auto& e : entries_) {
    std::vector<double> sorted(e.latencies.begin(), e.latencies.end());
    std::sort(sorted.begin(), sorted.end());
    json::object latency{{"count", sorted.size()},
                         {"p50", rank(sorted, 0.5)},
                         {"p90", rank(sorted, 0.9)},
                         {"p99", rank(sorted, 0.99)},
                         {"max", sorted.empty() ? 0.0 : sorted.back()}};
    const quota_limits& l = e.quota.limits();
    json::object quota{{"tokensLastHour", e.quota.used_last_hour(now)},
                       {"tokensLastDay", e.quota.used_last_day(now)},
                       {"tokensPerHour", l.tokens_per_hour},
                       {"tokensPerDay", l.tokens_per_day},
                       {"spent", e.quota.spent(now)}};
    out.push_back(json::object{
        {"name", e.src.name},
        {"kind", e.src.kind},
        {"state", e.state},
        {"requests", e.requests},
        {"answered", e.answered},
        {"errors", e.errors},
        {"cancelled", e.cancelled},
        {"skipped", json::object{{"down", e.skipped_down}, {"deadline", e.skipped_deadline}, {"quota", e.skipped_quota},
                                 {"load", e.skipped_load}}},
        {"promptTokens", e.prompt_tokens},
        {"completionTokens", e.completion_tokens},
        {"latencyMs", std::move(latency)},
        {"quota", std::move(quota)},
    });
  }
  return out;
}

}  // namespace qf::server::routing
