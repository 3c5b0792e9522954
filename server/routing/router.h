// The router: a completion_provider made of other providers (the sources).
//
// An automatic trigger takes the automatic route, an explicit invocation the
// explicit route; each route is a list of sources tried in order. A source is
// passed over when it is down (could not be made), when its token quota is
// spent (the user is told once per spend), or when its recent latency (the
// median of its last answered calls) exceeds the time left before the
// deadline and a later source remains. Under load, an automatic request goes
// to the underLoad route first (then the automatic route) when the first up
// source of the automatic route estimates that it would break the request's
// deadline (completion_provider::load_plan; counted as that source's
// skipped.load and as the answer's degraded.rerouted). A source that throws source_failure
// is recorded and the next one is tried; other exceptions pass through, as
// they did without a router. When no source could answer, complete() throws
// source_failure naming each source's reason.
//
// Every call is metered on the board, a cancelled or failed one included:
// its prompt and completion tokens (a result's metrics, or a failure's
// spent()) count against the source's quota, so a cancelled remote call
// counts the prompt that went out.
//
// Everything runs on the inference worker, like any provider; the board
// (source_board.h) is how the dispatcher sees the sources. Calls to
// non-local sources each write one audit line (audit_log.h).
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "server/completion/api/completion_provider.h"
#include "server/routing/audit_log.h"
#include "server/routing/source_board.h"

namespace qf::server::routing {

struct routed_source {
  std::string name;
  std::string kind;
  bool local = false;
  std::unique_ptr<completion_provider> provider;  // null: down
  std::string down_reason;
};

struct router_hooks {
  std::shared_ptr<source_board> board;             // never null (make_router makes one if needed)
  std::shared_ptr<audit_log> audit;                // null: no audit log
  std::function<void(const std::string&)> notify;  // a message for the user (window/showMessage)
  std::function<source_board::clock::time_point()> now;  // quota windows; steady_clock::now by default
};

class router final : public completion_provider {
 public:
  router(std::vector<routed_source> sources, std::vector<std::string> automatic,
         std::vector<std::string> explicit_route, router_hooks hooks);

  completion_result complete(const completion_request& req, const cancel_token& cancel) override;
  bool background_step(const cancel_token& cancel) override;
  std::optional<prompt_explanation> explain(const completion_request& req) override;
  std::optional<load_explanation> load_plan(const completion_request& req) override;
  next_edit_result next_edit(const next_edit_request& req, const cancel_token& cancel) override;
  void document_closed(const std::string& key) override;
  void sessions_changed(int sessions) override;
  void configure(const completion::completion_settings& settings) override;
  std::string describe() const override;
  source_health health() const override;
  // routes.underLoad (routing_settings.h); empty: automatic requests are not rerouted.
  void set_under_load(std::vector<std::string> names) { under_load_ = std::move(names); }

 private:
  routed_source* find(const std::string& name);
  const routed_source* primary() const;  // the first available source of the automatic route
  // The underLoad route's first up source other than `from`, or null.
  const routed_source* under_load_source(const routed_source* from);
  void audit(const routed_source& s, const completion_request& req, const completion_result* result,
             const std::string& status, double latency_ms);
  void update_health(routed_source& s, bool ok, const std::string& error);

  std::vector<routed_source> sources_;
  std::vector<std::string> automatic_, explicit_, under_load_;
  router_hooks hooks_;
  std::vector<bool> quota_marked_;  // per source: the board shows quota_spent
  std::size_t background_next_ = 0;
};

}  // namespace qf::server::routing
