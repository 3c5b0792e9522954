// The board of completion sources: each source's health and meter, written
// by the router on the inference worker and read by quickfill/status and
// quickfill/stats on the dispatcher without waiting for the worker (one
// mutex, held only to copy numbers).
//
// The server core owns the board, so it outlives routers: a settings change
// that rebuilds the router keeps the counters and the quota windows of the
// sources whose names stay.
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <mutex>
#include <string>
#include <vector>

#include <boost/json/value.hpp>

#include "server/routing/routing_settings.h"
#include "server/routing/token_quota.h"

namespace qf::server::routing {

struct board_source {
  std::string name;
  std::string kind;
  bool local = false;
  quota_limits quota;
};

// One call to a source, as the meter sees it. Its tokens count against the
// quota whatever the outcome: a cancelled or failed call counts what the
// source reports it sent and received.
struct call_record {
  bool ok = true;
  bool cancelled = false;  // the request was cancelled (counted apart from errors)
  double latency_ms = 0;
  std::int64_t prompt_tokens = 0;
  std::int64_t completion_tokens = 0;
  std::string error;  // when !ok: the source_failure's message
};

// load: an automatic request the source's load estimate sent to routes.underLoad.
enum class skip_reason { down, deadline, quota, load };

class source_board {
 public:
  using clock = std::chrono::steady_clock;

  // The sources of the router in force, in order; entries of other names go.
  void set_sources(const std::vector<board_source>& sources);
  void set_routes(std::vector<std::string> automatic, std::vector<std::string> explicit_route);
  // state: "starting", "ok", "degraded", "down", "circuit_open", "quota_spent".
  void set_state(const std::string& name, const std::string& state, const std::string& detail,
                 const std::string& last_error = {});  // non-empty: also the last error
  void record_call(const std::string& name, const call_record& c, clock::time_point now = clock::now());
  void record_skip(const std::string& name, skip_reason why);
  // Median latency of the last answered calls (0 when none yet).
  double recent_latency_ms(const std::string& name) const;
  // Whether the source's quota is spent (reason set); notice: true once per spend.
  bool quota_spent(const std::string& name, clock::time_point now, std::string* reason = nullptr,
                   bool* notice = nullptr);

  // quickfill/status: [{"name","kind","local","state","detail","lastError"}], and the routes.
  boost::json::value status_json() const;
  // quickfill/stats: [{"name","kind","requests","answered","errors","cancelled","skipped":{..},
  //  "promptTokens","completionTokens","latencyMs":{p50..},"quota":{..}}]
  boost::json::value stats_json(clock::time_point now = clock::now());

 private:
  struct entry {
    board_source src;
    std::string state = "starting";
    std::string detail;
    std::string last_error;
    std::uint64_t requests = 0, answered = 0, errors = 0, cancelled = 0;
    std::uint64_t skipped_down = 0, skipped_deadline = 0, skipped_quota = 0, skipped_load = 0;
    std::int64_t prompt_tokens = 0, completion_tokens = 0;
    std::deque<double> latencies;  // answered calls, newest last, bounded
    token_quota quota;
  };
  entry* find(const std::string& name);
  const entry* find(const std::string& name) const;

  mutable std::mutex mu_;
  std::vector<entry> entries_;
  std::vector<std::string> automatic_, explicit_;
};

}  // namespace qf::server::routing
