// Acceptance counters (see the header).
#include "server/core/acceptance_stats.h"

#include <algorithm>

#include <boost/json.hpp>

namespace qf::server {

namespace json = boost::json;

namespace {

bool known_source(const std::string& s) { return s == "completion" || s == "inline" || s == "nextEdit"; }
bool known_trigger(const std::string& t) { return t == "automatic" || t == "explicit"; }

}  // namespace

bool acceptance_stats::shown(const std::string& id, const std::string& source, const std::string& trigger,
                             std::int64_t length, std::string* why) {
  if (!known_source(source)) {
    if (why) *why = "params.source: expected \"completion\", \"inline\" or \"nextEdit\", got \"" + source + "\"";
    return false;
  }
  if (!known_trigger(trigger)) {
    if (why) *why = "params.trigger: expected \"automatic\" or \"explicit\", got \"" + trigger + "\"";
    return false;
  }
  std::lock_guard<std::mutex> lock(mu_);
  if (pending_.count(id)) return true;  // shown again: counted once
  length = std::max<std::int64_t>(0, length);
  counters& c = by_source_[source][trigger];
  ++c.shown;
  c.shown_chars += length;
  pending_.emplace(id, entry{source, trigger, length, false});
  order_.push_back(id);
  while (order_.size() > max_pending_) {
    pending_.erase(order_.front());
    order_.pop_front();
  }
  return true;
}

void acceptance_stats::accepted(const std::string& id, std::int64_t accepted_length) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = pending_.find(id);
  if (it == pending_.end()) {
    ++unmatched_;
    return;
  }
  entry& e = it->second;
  if (e.accepted) return;
  const std::int64_t n = std::clamp<std::int64_t>(accepted_length, 0, e.length);
  if (n == 0 && e.length > 0) return;  // nothing of it was taken
  e.accepted = true;
  counters& c = by_source_[e.source][e.trigger];
  ++c.accepted;
  if (n < e.length) ++c.partly;
  c.accepted_chars += n;
}

json::value acceptance_stats::to_json() const {
  auto render = [](const counters& c) {
    return json::object{{"shown", c.shown},
                        {"accepted", c.accepted},
                        {"partlyAccepted", c.partly},
                        {"acceptanceRate", c.shown ? static_cast<double>(c.accepted) / static_cast<double>(c.shown) : 0.0},
                        {"shownChars", c.shown_chars},
                        {"acceptedChars", c.accepted_chars}};
  };
  std::lock_guard<std::mutex> lock(mu_);
  counters total;
  json::object by_source;
  for (const char* source : {"completion", "inline", "nextEdit"}) {
    json::object by_trigger;
    for (const char* trigger : {"automatic", "explicit"}) {
      counters c;
      if (auto s = by_source_.find(source); s != by_source_.end())
        if (auto t = s->second.find(trigger); t != s->second.end()) c = t->second;
      total.shown += c.shown;
      total.accepted += c.accepted;
      total.partly += c.partly;
      total.shown_chars += c.shown_chars;
      total.accepted_chars += c.accepted_chars;
      by_trigger[trigger] = render(c);
    }
    by_source[source] = std::move(by_trigger);
  }
  return json::object{{"total", render(total)}, {"bySource", std::move(by_source)}, {"unmatchedAccepts", unmatched_}};
}

}  // namespace qf::server
