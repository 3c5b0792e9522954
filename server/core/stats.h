// Per-request completion metrics and cancellations, kept for the custom
// `quickfill/stats` request and logged at debug level.
//
// Every completion request ends in exactly one record: answered (with the
// provider's completion_metrics), answered without a model, or cancelled with
// a reason. Aggregates are computed on demand from bounded history: count,
// p50/p90/p99 of ttft_ms and total_ms over answered requests, the cache hit
// rate, cancellations by reason, the cancel-to-free latency (from the
// moment a running job was cancelled to the worker being free again), and the
// degradations under load by kind (completion_metrics::degraded).
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include <boost/json/value.hpp>

#include "server/completion/api/completion_provider.h"
#include "server/core/stats_windows.h"

namespace qf::server {

// failed: the provider threw (a source failed); answered with no items.
enum class request_outcome { answered, no_model, cancelled, failed };

struct request_record {
  std::string uri;
  std::int64_t version = 0;
  bool inline_request = false;
  bool explicit_trigger = false;
  bool http = false;  // arrived on the HTTP endpoint (server/http/): its own source kind
  request_outcome outcome = request_outcome::answered;
  cancel_reason reason = cancel_reason::none;  // when cancelled
  std::size_t items = 0;
  double wall_ms = 0;  // from arrival to the reply
  double slo_budget_ms = 0;  // the SLO budget in force when it arrived (the "slo.budgetMs" setting)
  completion_metrics metrics;
};

struct percentiles {
  std::size_t count = 0;
  double p50 = 0, p90 = 0, p99 = 0, max = 0;
};

percentiles compute_percentiles(std::vector<double> values);

class stats_collector {
 public:
  explicit stats_collector(std::size_t history = 1000) : history_(history) {}

  void record(const request_record& r) { record(r, stats_windows::clock::now()); }
  void record(const request_record& r, stats_windows::clock::time_point arrived);
  void record_cancel_to_free(cancel_reason why, double ms);
  // A running generation was kept past its request (in-flight reuse).
  void record_kept();

  // {"requests":N,"answered":N,"noModel":N,"ttftMs":{p50..},"totalMs":{..},
  //  "cacheHitRate":x,"cancellations":{"content_modified":N,..},
  //  "cancelToFreeMs":{..},"inflight":{"kept":N,"answered":N},"confidence":{"score":{p50..},"gated":N},
  //  "degraded":{"shortened":N,"candidatesDropped":N,"backgroundPaused":N,"rerouted":N},"recent":[..],
  //  "histograms":{..},"slo":{..}} (the last two: see stats_windows.h)
  boost::json::value to_json(std::size_t recent_limit, const slo_options& slo = {},
                             stats_windows::clock::time_point now = stats_windows::clock::now()) const;

 private:
  std::size_t history_;
  mutable std::mutex mu_;
  std::deque<request_record> recent_;
  std::deque<double> cancel_to_free_;
  std::uint64_t total_ = 0, answered_ = 0, no_model_ = 0, failed_ = 0, cache_hits_ = 0;
  std::uint64_t kept_ = 0, kept_answers_ = 0;  // generations kept; answers made from them
  std::uint64_t gated_ = 0;  // answered requests whose every suggestion the confidence gate dropped
  // Degradations under load: answers shortened, with candidates dropped,
  // rerouted; background steps paused (reported with the answers).
  std::uint64_t shortened_ = 0, candidates_dropped_ = 0, rerouted_ = 0, background_paused_ = 0;
  std::map<std::string, std::uint64_t> cancellations_;
  stats_windows windows_;
};

}  // namespace qf::server
