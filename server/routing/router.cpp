// Route choice, fallback, deadline skips, quotas, metering and audit lines
// (see router.h).
#include "server/routing/router.h"

#include <algorithm>

#include <spdlog/spdlog.h>

#include "server/completion/api/source_failure.h"

namespace qf::server::routing {

namespace {

double ms_between(clock::time_point a, clock::time_point b) {
  return std::chrono::duration<double, std::milli>(b - a).count();
}

std::int64_t prompt_tokens(const completion_metrics& m) { return m.tokens_evaluated + m.tokens_reused; }

}  // namespace

router::router(std::vector<routed_source> sources, std::vector<std::string> automatic,
               std::vector<std::string> explicit_route, router_hooks hooks)
    : sources_(std::move(sources)),
      automatic_(std::move(automatic)),
      explicit_(std::move(explicit_route)),
      hooks_(std::move(hooks)),
      quota_marked_(sources_.size(), false) {
  if (!hooks_.board) hooks_.board = std::make_shared<source_board>();
  if (!hooks_.now) hooks_.now = [] { return source_board::clock::now(); };
}

routed_source* router::find(const std::string& name) {
  for (auto& s : sources_)
    if (s.name == name) return &s;
  return nullptr;
}

const routed_source* router::primary() const {
  for (const auto& n : automatic_)
    for (const auto& s : sources_)
      if (s.name == n && s.provider) return &s;
  for (const auto& s : sources_)
    if (s.provider) return &s;
  return nullptr;
}

void router::update_health(routed_source& s, bool ok, const std::string& error) {
  source_health h = s.provider->health();
  if (!ok && h.state == "ok") h = source_health{"degraded", error};
  if (ok && h.state == "ok" && h.detail.empty()) h.detail = s.provider->describe();
  hooks_.board->set_state(s.name, h.state, h.detail);
}

void router::audit(const routed_source& s, const completion_request& req, const completion_result* result,
                   const std::string& status, double latency_ms) {
  if (s.local || !hooks_.audit) return;
  audit_entry e;
  e.source = s.name;
  e.kind = s.kind;
  e.uri = req.uri;
  e.explicit_trigger = req.explicit_trigger;
  e.status = status;
  e.latency_ms = latency_ms;
  if (result) {
    e.prompt_tokens = prompt_tokens(result->metrics);
    e.completion_tokens = result->metrics.tokens_generated;
    for (const auto& c : result->items) e.suggestions.push_back(c.insert_text);
  }
  // The code around the cursor (written only with audit.includeCode).
  const std::string_view text = req.text.view();
  std::size_t line_start = 0;
  for (int64_t l = 0; l < req.cursor.line && line_start < text.size(); ++l) {
    const std::size_t nl = text.find('\n', line_start);
    if (nl == std::string_view::npos) break;
    line_start = nl + 1;
  }
  const std::size_t at = std::min(text.size(), line_start + static_cast<std::size_t>(std::max<int64_t>(0, req.cursor.byte_col)));
  const std::size_t from = at > 2048 ? at - 2048 : 0;
  e.code_before = std::string(text.substr(from, at - from));
  e.code_after = std::string(text.substr(at, 512));
  hooks_.audit->write(e);
}

const routed_source* router::under_load_source(const routed_source* from) {
  for (const auto& n : under_load_)
    if (const routed_source* s = find(n); s && s != from && s->provider) return s;
  return nullptr;
}

completion_result router::complete(const completion_request& req, const cancel_token& cancel) {
  // Under load: an automatic request that the automatic route's first up
  // source estimates would break its deadline tries the underLoad route first.
  std::vector<std::string> rerouted;
  if (!req.explicit_trigger && !under_load_.empty()) {
    const routed_source* first = nullptr;
    for (const auto& n : automatic_)
      if (const routed_source* s = find(n); s && s->provider) {
        first = s;
        break;
      }
    if (first && under_load_source(first)) {
      const std::optional<load_explanation> plan = first->provider->load_plan(req);
      if (plan && plan->degraded) {
        hooks_.board->record_skip(first->name, skip_reason::load);
        spdlog::debug("source {} is under load ({}): automatic request to routes.underLoad", first->name, plan->reason);
        rerouted = under_load_;
        for (const auto& n : automatic_)
          if (std::find(rerouted.begin(), rerouted.end(), n) == rerouted.end()) rerouted.push_back(n);
      }
    }
  }
  const std::vector<std::string>& route = !rerouted.empty() ? rerouted : req.explicit_trigger ? explicit_ : automatic_;
  auto mark = [&](completion_result& r, const routed_source& s) {
    if (!rerouted.empty() && std::find(under_load_.begin(), under_load_.end(), s.name) != under_load_.end())
      r.metrics.degraded.rerouted = true;
  };
  std::string reasons;
  std::optional<failure_kind> last_kind;
  auto note = [&](const std::string& name, const std::string& why) {
    reasons += (reasons.empty() ? "" : "; ") + name + ": " + why;
  };
  for (std::size_t i = 0; i < route.size(); ++i) {
    routed_source* s = find(route[i]);
    if (!s) continue;
    const std::size_t index = static_cast<std::size_t>(s - sources_.data());
    if (!s->provider) {
      hooks_.board->record_skip(s->name, skip_reason::down);
      note(s->name, "down (" + s->down_reason + ")");
      continue;
    }
    // The quota: spent -> the next source, and the user is told once per spend.
    std::string spent_why;
    bool notice = false;
    if (hooks_.board->quota_spent(s->name, hooks_.now(), &spent_why, &notice)) {
      hooks_.board->record_skip(s->name, skip_reason::quota);
      if (!quota_marked_[index]) hooks_.board->set_state(s->name, "quota_spent", spent_why);
      quota_marked_[index] = true;
      if (notice && hooks_.notify) {
        std::string next;
        for (std::size_t j = i + 1; j < route.size() && next.empty(); ++j)
          if (const routed_source* n = find(route[j]); n && n->provider) next = n->name;
        hooks_.notify("quickfill: the token quota of source \"" + s->name + "\" is spent (" + spent_why + "); " +
                      (next.empty() ? std::string("it is skipped") : "completions come from \"" + next + "\"") +
                      " until it refills.");
      }
      note(s->name, "quota spent (" + spent_why + ")");
      last_kind = failure_kind::quota;
      continue;
    }
    if (quota_marked_[index]) {
      quota_marked_[index] = false;
      hooks_.board->set_state(s->name, "ok", "quota refilled");
    }
    // The deadline: a source slower than the time left gives way to a later one.
    const clock::time_point start = clock::now();
    const double left_ms = ms_between(start, req.deadline);
    const double recent = hooks_.board->recent_latency_ms(s->name);
    bool later_available = false;
    for (std::size_t j = i + 1; j < route.size() && !later_available; ++j)
      if (const routed_source* n = find(route[j]); n && n->provider) later_available = true;
    if (later_available && recent > left_ms) {
      hooks_.board->record_skip(s->name, skip_reason::deadline);
      note(s->name, "too slow for the time left");
      continue;
    }
    try {
      completion_result r = s->provider->complete(req, cancel);
      const double took = ms_between(start, clock::now());
      call_record c;
      c.latency_ms = took;
      c.prompt_tokens = prompt_tokens(r.metrics);
      c.completion_tokens = r.metrics.tokens_generated;
      if (cancel.is_cancelled()) {
        // What was sent before the cancellation still counts.
        c.cancelled = true;
        hooks_.board->record_call(s->name, c, hooks_.now());
        audit(*s, req, &r, "cancelled", took);
        mark(r, *s);
        return r;
      }
      hooks_.board->record_call(s->name, c, hooks_.now());
      update_health(*s, true, {});
      audit(*s, req, &r, "ok", took);
      mark(r, *s);
      return r;
    } catch (const source_failure& f) {
      const double took = ms_between(start, clock::now());
      call_record c;
      c.ok = false;
      c.cancelled = cancel.is_cancelled();
      c.latency_ms = took;
      c.error = f.what();
      c.prompt_tokens = f.spent().prompt_tokens;  // a failure after the request went out
      c.completion_tokens = f.spent().completion_tokens;
      hooks_.board->record_call(s->name, c, hooks_.now());
      update_health(*s, false, f.what());
      audit(*s, req, nullptr, failure_kind_name(f.kind()), took);
      spdlog::warn("source {} failed ({}): {}", s->name, failure_kind_name(f.kind()), f.what());
      if (cancel.is_cancelled()) return {};
      if (route.size() == 1) throw;  // a route of one source: its failure as it is (the server without routing)
      note(s->name, f.what());
      last_kind = f.kind();
    }
  }
  throw source_failure(last_kind.value_or(failure_kind::unavailable),
                       std::string("no source of the ") + (req.explicit_trigger ? "explicit" : "automatic") +
                           " route could answer" + (reasons.empty() ? "" : ": " + reasons));
}

bool router::background_step(const cancel_token& cancel) {
  for (std::size_t k = 0; k < sources_.size(); ++k) {
    routed_source& s = sources_[(background_next_ + k) % sources_.size()];
    if (!s.provider) continue;
    if (s.provider->background_step(cancel)) {
      background_next_ = (background_next_ + k + 1) % sources_.size();
      return true;
    }
  }
  return false;
}

std::optional<prompt_explanation> router::explain(const completion_request& req) {
  for (const auto& n : req.explicit_trigger ? explicit_ : automatic_)
    if (routed_source* s = find(n); s && s->provider)
      if (auto e = s->provider->explain(req)) {
        // Each trigger kind's load plan comes from the first up source of its
        // route (a source that cannot plan keeps what its explanation said).
        std::vector<load_explanation> plans;
        for (bool expl : {false, true}) {
          const std::optional<completion_request> r = as_trigger_now(req, expl, clock::now());
          if (!r) continue;
          const std::string trigger = expl ? "explicit" : "automatic";
          if (auto l = load_plan(*r)) {
            plans.push_back(std::move(*l));
          } else {
            for (const load_explanation& own : e->load)
              if (own.trigger == trigger) plans.push_back(own);
          }
        }
        e->load = std::move(plans);
        return e;
      }
  return std::nullopt;
}

std::optional<load_explanation> router::load_plan(const completion_request& req) {
  for (const auto& n : req.explicit_trigger ? explicit_ : automatic_)
    if (routed_source* s = find(n); s && s->provider) {
      std::optional<load_explanation> l = s->provider->load_plan(req);
      if (l && l->degraded && !req.explicit_trigger)
        if (const routed_source* to = under_load_source(s)) l->rerouted_to = to->name;
      return l;
    }
  return std::nullopt;
}

next_edit_result router::next_edit(const next_edit_request& req, const cancel_token& cancel) {
  // Next edits come from the first local source of the automatic route (remote kinds predict none).
  for (const auto& n : automatic_)
    if (routed_source* s = find(n); s && s->provider && s->local) return s->provider->next_edit(req, cancel);
  return completion_provider::next_edit(req, cancel);
}

void router::document_closed(const std::string& key) {
  for (auto& s : sources_)
    if (s.provider) s.provider->document_closed(key);
}

void router::sessions_changed(int sessions) {
  for (auto& s : sources_)
    if (s.provider) s.provider->sessions_changed(sessions);
}

void router::configure(const completion::completion_settings& settings) {
  for (auto& s : sources_)
    if (s.provider) s.provider->configure(settings);
}

std::string router::describe() const {
  const routed_source* p = primary();
  std::string d = p ? p->provider->describe() : "no source available";
  if (sources_.size() <= 1) return d;
  auto join = [](const std::vector<std::string>& v) {
    std::string out;
    for (const auto& n : v) out += (out.empty() ? "" : " > ") + n;
    return out;
  };
  return d + " [routes: automatic " + join(automatic_) + ", explicit " + join(explicit_) + "]";
}

source_health router::health() const {
  const routed_source* p = primary();
  if (!p) return {"down", "no source is available"};
  return p->provider->health();
}

}  // namespace qf::server::routing
