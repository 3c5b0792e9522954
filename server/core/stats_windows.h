// Bounded histograms and time windows behind the dashboard (`quickfill
// report`) and the latency SLO, part of `quickfill/stats`.
//
// Every completion record lands in two places, both of fixed size:
// * a cell per source ("completion" list, "inline", or "http": the HTTP
//   endpoint of server/http/) and trigger kind
//   ("automatic" or "explicit") with counts and fixed-bucket histograms of
//   time to first token, total time, decode speed (tokens per second) and
//   cache reuse (the share of prompt tokens served from the KV cache);
// * a ring of time slots (slot_seconds each, a day of them) with counts and
//   a histogram of the reply time of automatic requests, from which the
//   percentiles over time and the SLO's compliance over the last hour and
//   day are computed. A window is whole slots: the current one and the
//   11 (hour) or 287 (day) before it.
// The SLO: a share `target` of the automatic requests that were answered
// gets its reply within `budget_ms` from arrival. Each record is judged
// against the budget in force when it arrived; cancelled requests (the user
// typed on) are counted but not judged. Percentiles from a histogram are the
// upper edge of the bucket holding the nearest rank, so the dashboard shows
// "at most" figures that the bucket counts confirm. Not thread-safe on its
// own: stats_collector holds its lock around every call.
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <vector>

#include <boost/json/value.hpp>

namespace qf::server {

struct request_record;

// Counts over fixed bucket edges: bucket i holds values in (edge[i-1], edge[i]]
// (the first from -inf), the last one everything above the last edge.
class fixed_histogram {
 public:
  explicit fixed_histogram(const std::vector<double>* edges) : edges_(edges), counts_(edges->size() + 1, 0) {}
  void add(double v);
  std::uint64_t total() const;
  // Upper edge of the bucket holding the nearest rank of q (0 < q <= 1); the
  // largest edge when it falls in the overflow bucket; 0 when empty.
  double quantile_upper(double q) const;
  void merge(const fixed_histogram& o);
  void clear();
  const std::vector<std::uint64_t>& counts() const { return counts_; }
  boost::json::value to_json() const;  // {"edges":[..],"counts":[..]}

 private:
  const std::vector<double>* edges_;
  std::vector<std::uint64_t> counts_;
};

const std::vector<double>& latency_edges_ms();
const std::vector<double>& tokens_per_second_edges();
const std::vector<double>& cache_reuse_edges();

struct slo_options {
  int budget_ms = 500;
  double target = 0.95;
};

class stats_windows {
 public:
  using clock = std::chrono::system_clock;
  static constexpr int slot_seconds = 300;
  static constexpr int day_slots = 24 * 3600 / slot_seconds;
  static constexpr int hour_slots = 3600 / slot_seconds;

  stats_windows();

  void record(const request_record& r, double budget_ms, clock::time_point t);

  // {"bySource": {"inline": {"automatic": {requests, answered, cancelled,
  //   noModel, ttftMs, totalMs, tokensPerSecond, cacheReuse}, ..}, ..}}
  boost::json::value histograms_json() const;
  // {"budgetMs","target","slotSeconds","lastHour":{judged,good,compliance,
  //  burnRate},"lastDay":{..},"slots":[{start,requests,judged,good,cancelled,
  //  p50Ms,p90Ms,p99Ms,burnRate}, ..]} with the slots of the last day that
  //  saw a request, oldest first.
  boost::json::value slo_json(const slo_options& slo, clock::time_point now) const;

 private:
  struct cell {
    std::uint64_t requests = 0, answered = 0, cancelled = 0, no_model = 0, failed = 0;
    fixed_histogram ttft, total, tps, reuse;
    cell();
  };
  struct slot {
    std::int64_t id = -1;  // time / slot_seconds; -1 unused
    std::uint64_t requests = 0, judged = 0, good = 0, cancelled = 0;
    fixed_histogram reply;  // wall time of answered automatic requests
    slot();
  };
  static constexpr int n_sources = 3, n_triggers = 2;
  std::array<std::array<cell, n_triggers>, n_sources> cells_;
  std::vector<slot> ring_;  // day_slots entries
};

}  // namespace qf::server
