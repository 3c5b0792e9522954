// Fixed-bucket histograms and time-slot windows (see stats_windows.h).
#include "server/core/stats_windows.h"

#include <algorithm>
#include <cmath>

#include <boost/json.hpp>

#include "server/core/stats.h"

namespace qf::server {

namespace json = boost::json;

namespace {

const char* source_names[] = {"completion", "inline", "http"};
const char* trigger_names[] = {"automatic", "explicit"};

std::int64_t slot_id(stats_windows::clock::time_point t) {
  const auto s = std::chrono::duration_cast<std::chrono::seconds>(t.time_since_epoch()).count();
  return s >= 0 ? s / stats_windows::slot_seconds : (s - stats_windows::slot_seconds + 1) / stats_windows::slot_seconds;
}

double ratio(std::uint64_t a, std::uint64_t b) { return b ? static_cast<double>(a) / static_cast<double>(b) : 0.0; }

// How fast the error budget is spent: the bad share over the allowed bad share.
double burn_rate(std::uint64_t judged, std::uint64_t good, double target) {
  if (judged == 0 || target >= 1.0) return 0.0;
  return ratio(judged - good, judged) / (1.0 - target);
}

}  // namespace

const std::vector<double>& latency_edges_ms() {
  static const std::vector<double> e{10, 25, 50, 75, 100, 150, 200, 300, 400, 500, 750, 1000, 1500, 2000, 3000, 5000};
  return e;
}
const std::vector<double>& tokens_per_second_edges() {
  static const std::vector<double> e{5, 10, 20, 30, 50, 75, 100, 150, 200, 300, 500, 1000};
  return e;
}
const std::vector<double>& cache_reuse_edges() {
  static const std::vector<double> e{0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0};
  return e;
}

void fixed_histogram::add(double v) {
  const auto it = std::lower_bound(edges_->begin(), edges_->end(), v);  // first edge >= v
  ++counts_[static_cast<std::size_t>(it - edges_->begin())];
}

std::uint64_t fixed_histogram::total() const {
  std::uint64_t n = 0;
  for (auto c : counts_) n += c;
  return n;
}

double fixed_histogram::quantile_upper(double q) const {
  const std::uint64_t n = total();
  if (n == 0) return 0;
  const auto rank = std::max<std::uint64_t>(1, static_cast<std::uint64_t>(std::ceil(q * static_cast<double>(n))));
  std::uint64_t seen = 0;
  for (std::size_t i = 0; i < counts_.size(); ++i) {
    seen += counts_[i];
    if (seen >= rank) return (*edges_)[std::min(i, edges_->size() - 1)];
  }
  return edges_->back();
}

void fixed_histogram::merge(const fixed_histogram& o) {
  for (std::size_t i = 0; i < counts_.size(); ++i) counts_[i] += o.counts_[i];
}

void fixed_histogram::clear() { std::fill(counts_.begin(), counts_.end(), 0); }

json::value fixed_histogram::to_json() const {
  json::array e, c;
  for (double v : *edges_) e.push_back(v);
  for (auto v : counts_) c.push_back(v);
  return json::object{{"edges", std::move(e)}, {"counts", std::move(c)}};
}

stats_windows::cell::cell()
    : ttft(&latency_edges_ms()), total(&latency_edges_ms()), tps(&tokens_per_second_edges()),
      reuse(&cache_reuse_edges()) {}

stats_windows::slot::slot() : reply(&latency_edges_ms()) {}

stats_windows::stats_windows() : ring_(day_slots) {}

void stats_windows::record(const request_record& r, double budget_ms, clock::time_point t) {
  cell& c = cells_[r.http ? 2 : r.inline_request ? 1 : 0][r.explicit_trigger ? 1 : 0];
  const std::int64_t id = slot_id(t);
  slot& s = ring_[static_cast<std::size_t>(((id % day_slots) + day_slots) % day_slots)];
  // A record older than what its ring entry holds now (the clock stepped
  // back a day or more) is left out of the windows rather than erase newer ones.
  slot* sp = &s;
  if (s.id > id) {
    sp = nullptr;
  } else if (s.id != id) {
    s = slot();
    s.id = id;
  }
  ++c.requests;
  if (sp) ++sp->requests;
  const completion_metrics& m = r.metrics;
  switch (r.outcome) {
    case request_outcome::cancelled:
      ++c.cancelled;
      if (sp) ++sp->cancelled;
      return;
    case request_outcome::no_model:
      ++c.no_model;
      return;
    case request_outcome::failed:
      ++c.failed;
      return;
    case request_outcome::answered: break;
  }
  ++c.answered;
  c.ttft.add(m.ttft_ms);
  c.total.add(m.total_ms);
  if (m.tokens_generated > 1 && m.tpot_ms > 0) c.tps.add(1000.0 / m.tpot_ms);
  if (const auto prompt = m.tokens_reused + m.tokens_evaluated; prompt > 0)
    c.reuse.add(static_cast<double>(m.tokens_reused) / static_cast<double>(prompt));
  if (r.explicit_trigger || !sp) return;
  sp->reply.add(r.wall_ms);
  ++sp->judged;
  if (r.wall_ms <= budget_ms) ++sp->good;
}

json::value stats_windows::histograms_json() const {
  json::object by_source;
  for (int si = 0; si < n_sources; ++si) {
    json::object by_trigger;
    for (int ti = 0; ti < n_triggers; ++ti) {
      const cell& c = cells_[si][ti];
      by_trigger[trigger_names[ti]] = json::object{
          {"requests", c.requests},        {"answered", c.answered},         {"cancelled", c.cancelled},
          {"noModel", c.no_model}, {"failed", c.failed},         {"ttftMs", c.ttft.to_json()},     {"totalMs", c.total.to_json()},
          {"tokensPerSecond", c.tps.to_json()}, {"cacheReuse", c.reuse.to_json()}};
    }
    by_source[source_names[si]] = std::move(by_trigger);
  }
  return json::object{{"bySource", std::move(by_source)}};
}

json::value stats_windows::slo_json(const slo_options& slo, clock::time_point now) const {
  const std::int64_t current = slot_id(now);
  std::vector<const slot*> live;
  for (const slot& s : ring_)
    if (s.id >= 0 && s.id > current - day_slots && s.id <= current) live.push_back(&s);
  std::sort(live.begin(), live.end(), [](const slot* a, const slot* b) { return a->id < b->id; });

  auto window = [&](int n_slots) {
    std::uint64_t judged = 0, good = 0;
    for (const slot* s : live)
      if (s->id > current - n_slots) judged += s->judged, good += s->good;
    return json::object{{"judged", judged},
                        {"good", good},
                        {"compliance", judged ? ratio(good, judged) : 1.0},
                        {"burnRate", burn_rate(judged, good, slo.target)}};
  };
  json::array slots;
  for (const slot* s : live) {
    slots.push_back(json::object{{"start", s->id * slot_seconds},
                                 {"requests", s->requests},
                                 {"judged", s->judged},
                                 {"good", s->good},
                                 {"cancelled", s->cancelled},
                                 {"p50Ms", s->reply.quantile_upper(0.50)},
                                 {"p90Ms", s->reply.quantile_upper(0.90)},
                                 {"p99Ms", s->reply.quantile_upper(0.99)},
                                 {"burnRate", burn_rate(s->judged, s->good, slo.target)}});
  }
  return json::object{{"budgetMs", slo.budget_ms},
                      {"target", slo.target},
                      {"slotSeconds", slot_seconds},
                      {"now", std::chrono::duration_cast<std::chrono::seconds>(now.time_since_epoch()).count()},
                      {"lastHour", window(hour_slots)},
                      {"lastDay", window(day_slots)},
                      {"slots", std::move(slots)}};
}

}  // namespace qf::server
