// `quickfill demo`: the closing summary (see demo.h).
#include <cstdio>

#include <boost/json.hpp>

#include "server/cli/demo.h"
#include "server/core/stats.h"

namespace qf::cli::demo {

void print_summary(const tallies& t, std::size_t keystrokes, const session::ending& e, bool have_model) {
  const server::percentiles p = server::compute_percentiles(t.latencies);
  std::printf("\nsummary: %zu keystrokes; %zu answered (%zu with items), %zu cancelled by the next edit "
              "(-32801), %zu otherwise cancelled, %zu errors\n",
              keystrokes, t.answered, t.with_items, t.modified, t.other_cancel, t.errors);
  std::printf("client-side latency of answered requests: p50 %.1f ms, p90 %.1f ms, max %.1f ms\n", p.p50, p.p90,
              p.max);
  if (e.stats && e.stats->as_object().contains("result")) {
    const boost::json::value& s = e.stats->at("result");
    std::printf("server stats: %lld requests, ttft p50 %.1f ms, total p50 %.1f ms / p90 %.1f ms, cache hit rate %.2f, "
                "cancel-to-free p50 %.2f ms\n",
                static_cast<long long>(s.at("requests").to_number<std::int64_t>()),
                s.at("ttftMs").at("p50").to_number<double>(), s.at("totalMs").at("p50").to_number<double>(),
                s.at("totalMs").at("p90").to_number<double>(), s.at("cacheHitRate").to_number<double>(),
                s.at("cancelToFreeMs").at("p50").to_number<double>());
  }
  if (!have_model) std::printf("no model was loaded: every answer above is the honest empty list.\n");
  std::printf("server exited with code %d%s\n", e.exit_code, e.timed_out ? " (timed out)" : "");
}

}  // namespace qf::cli::demo
