// Completion statistics (see stats.h).
#include "server/core/stats.h"

#include <algorithm>
#include <cmath>

#include <boost/json.hpp>
#include <spdlog/spdlog.h>

#include "server/core/request_outcome.h"

namespace qf::server {

namespace json = boost::json;

namespace {

const char* outcome_name(request_outcome o) {
  switch (o) {
    case request_outcome::answered: return "answered";
    case request_outcome::no_model: return "no_model";
    case request_outcome::cancelled: return "cancelled";
    case request_outcome::failed: return "failed";
  }
  return "unknown";
}

json::object percentiles_json(const percentiles& p) {
  return json::object{{"count", p.count}, {"p50", p.p50}, {"p90", p.p90}, {"p99", p.p99}, {"max", p.max}};
}

}  // namespace

percentiles compute_percentiles(std::vector<double> values) {
  percentiles p;
  p.count = values.size();
  if (values.empty()) return p;
  std::sort(values.begin(), values.end());
  // Nearest-rank percentile.
  auto rank = [&](double q) {
    std::size_t k = static_cast<std::size_t>(std::ceil(q * static_cast<double>(values.size())));
    return values[std::clamp<std::size_t>(k, 1, values.size()) - 1];
  };
  p.p50 = rank(0.50);
  p.p90 = rank(0.90);
  p.p99 = rank(0.99);
  p.max = values.back();
  return p;
}

void stats_collector::record(const request_record& r, stats_windows::clock::time_point arrived) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    windows_.record(r, r.slo_budget_ms, arrived);
    ++total_;
    if (r.outcome == request_outcome::answered) {
      ++answered_;
      if (r.metrics.cache_hit) ++cache_hits_;
      if (r.metrics.kept) ++kept_answers_;
      if (r.metrics.gated > 0 && r.items == 0) ++gated_;
      const degradation& d = r.metrics.degraded;
      shortened_ += d.shortened;
      candidates_dropped_ += d.candidates_dropped;
      rerouted_ += d.rerouted;
      background_paused_ += static_cast<std::uint64_t>(std::max<std::int64_t>(0, d.background_paused));
    } else if (r.outcome == request_outcome::no_model) {
      ++no_model_;
    } else if (r.outcome == request_outcome::failed) {
      ++failed_;
    } else {
      ++cancellations_[cancel_reason_name(r.reason)];
    }
    recent_.push_back(r);
    while (recent_.size() > history_) recent_.pop_front();
  }
  spdlog::debug("completion {} v{} {}{}: {} items={} wall={:.1f}ms queue={:.1f}ms ttft={:.1f}ms total={:.1f}ms "
                "reused={} evaluated={} generated={}",
                r.uri, r.version, r.inline_request ? "inline" : "list", r.explicit_trigger ? " explicit" : "",
                r.outcome == request_outcome::cancelled ? cancel_reason_name(r.reason) : outcome_name(r.outcome),
                r.items, r.wall_ms, r.metrics.queue_ms, r.metrics.ttft_ms, r.metrics.total_ms,
                r.metrics.tokens_reused, r.metrics.tokens_evaluated, r.metrics.tokens_generated);
}

void stats_collector::record_cancel_to_free(cancel_reason why, double ms) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    cancel_to_free_.push_back(ms);
    while (cancel_to_free_.size() > history_) cancel_to_free_.pop_front();
  }
  spdlog::debug("worker free {:.2f} ms after cancelling a running job ({})", ms, cancel_reason_name(why));
}

void stats_collector::record_kept() {
  std::lock_guard<std::mutex> lock(mu_);
  ++kept_;
}

json::value stats_collector::to_json(std::size_t recent_limit, const slo_options& slo,
                                     stats_windows::clock::time_point now) const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<double> ttft, total, scores;
  for (const auto& r : recent_) {
    if (r.outcome != request_outcome::answered) continue;
    ttft.push_back(r.metrics.ttft_ms);
    total.push_back(r.metrics.total_ms);
    if (r.metrics.score) scores.push_back(*r.metrics.score);
  }
  json::object cancels;
  for (const auto& [k, v] : cancellations_) cancels[k] = v;
  json::array recent;
  std::size_t start = recent_.size() > recent_limit ? recent_.size() - recent_limit : 0;
  for (std::size_t i = start; i < recent_.size(); ++i) {
    const auto& r = recent_[i];
    const auto& m = r.metrics;
    json::object o{{"uri", r.uri},
                   {"version", r.version},
                   {"kind", r.inline_request ? "inline" : "completion"},
                   {"explicit", r.explicit_trigger},
                   {"outcome", outcome_name(r.outcome)},
                   {"items", r.items},
                   {"wallMs", r.wall_ms},
                   {"queueMs", m.queue_ms},
                   {"ttftMs", m.ttft_ms},
                   {"tpotMs", m.tpot_ms},
                   {"totalMs", m.total_ms},
                   {"tokensReused", m.tokens_reused},
                   {"tokensEvaluated", m.tokens_evaluated},
                   {"tokensGenerated", m.tokens_generated},
                   {"tokensDrafted", m.tokens_drafted},
                   {"tokensAccepted", m.tokens_accepted},
                   {"cacheHit", m.cache_hit},
                   {"typeThrough", m.type_through},
                   {"kept", m.kept}};
    if (r.outcome == request_outcome::cancelled) o["reason"] = cancel_reason_name(r.reason);
    if (m.score) o["score"] = *m.score;
    if (m.candidates > 1) o["candidates"] = m.candidates;
    if (m.gated > 0) o["gated"] = m.gated;
    if (m.degraded.any())
      o["degraded"] = json::object{{"shortened", m.degraded.shortened},
                                   {"candidatesDropped", m.degraded.candidates_dropped},
                                   {"rerouted", m.degraded.rerouted},
                                   {"maxTokens", m.degraded.max_tokens},
                                   {"candidates", m.degraded.candidates},
                                   {"estimateMs", m.degraded.estimate_ms},
                                   {"leftMs", m.degraded.left_ms}};
    recent.push_back(std::move(o));
  }
  return json::object{
      {"requests", total_},
      {"answered", answered_},
      {"noModel", no_model_},
      {"failed", failed_},
      {"ttftMs", percentiles_json(compute_percentiles(ttft))},
      {"totalMs", percentiles_json(compute_percentiles(total))},
      {"cacheHitRate", answered_ ? static_cast<double>(cache_hits_) / static_cast<double>(answered_) : 0.0},
      {"cancellations", std::move(cancels)},
      {"cancelToFreeMs",
       percentiles_json(compute_percentiles(std::vector<double>(cancel_to_free_.begin(), cancel_to_free_.end())))},
      // In-flight reuse: generations kept running while the user typed what
      // they produced, and the answers made from them.
      {"inflight", json::object{{"kept", kept_}, {"answered", kept_answers_}}},
      // The best candidate's score (mean token log-probability) of answered
      // requests, and how many answers the confidence gate left empty.
      {"confidence", json::object{{"score", percentiles_json(compute_percentiles(scores))}, {"gated", gated_}}},
      // Degradations under load, per kind (docs/completion.md, "Under load").
      {"degraded", json::object{{"shortened", shortened_},
                                {"candidatesDropped", candidates_dropped_},
                                {"backgroundPaused", background_paused_},
                                {"rerouted", rerouted_}}},
      {"recent", std::move(recent)},
      {"histograms", windows_.histograms_json()},
      {"slo", windows_.slo_json(slo, now)},
  };
}

}  // namespace qf::server
