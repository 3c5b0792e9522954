// Building the router from the settings (see make_router.h).
#include "server/routing/make_router.h"

#include <algorithm>

#include <spdlog/spdlog.h>

#include "server/routing/router.h"

namespace qf::server::routing {

std::unique_ptr<completion_provider> make_router(const router_inputs& in, std::string* error) {
  const source_registry& kinds = in.kinds ? *in.kinds : builtin_kinds();
  router_hooks hooks;
  hooks.board = in.board ? in.board : std::make_shared<source_board>();
  hooks.notify = in.notify;
  hooks.now = in.now;
  const routing_settings& rs = in.settings;

  std::vector<routed_source> sources;
  std::vector<board_source> board;
  std::string first_error;
  make_context ctx = in.context;
  ctx.memory_reserve_bytes = static_cast<std::uint64_t>(std::max(0, rs.memory_reserve_mib)) << 20;
  ctx.resident_local_models = 0;

  if (rs.sources.empty()) {
    // The implicit local source: exactly the provider the server made before routing.
    routed_source s;
    s.name = implicit_source_name;
    s.kind = "local";
    s.local = true;
    std::string err;
    if (ctx.factory) s.provider = ctx.factory(ctx.base, &err);
    else err = "this build has no completion engine";
    if (!s.provider) {
      if (error) *error = err;
      return nullptr;
    }
    board.push_back({s.name, s.kind, true, {}});
    sources.push_back(std::move(s));
  } else {
    for (std::size_t i = 0; i < rs.sources.size(); ++i) {
      const source_config& c = rs.sources[i];
      routed_source s;
      s.name = c.name;
      s.kind = c.kind;
      const source_kind* k = kinds.find(c.kind);
      s.local = k && k->local;
      board.push_back({c.name, c.kind, s.local, c.quota});
      std::string err;
      if (!k) {
        err = "unknown kind \"" + c.kind + "\"";
      } else if (auto opts = k->parse(c.members, "sources[" + std::to_string(i) + "]", &err)) {
        ctx.name = c.name;
        try {
          s.provider = k->make(*opts, ctx, &err);
        } catch (const std::exception& e) {
          err = e.what();
        }
      }
      if (s.provider) {
        if (s.local) ++ctx.resident_local_models;
      } else {
        s.down_reason = err.empty() ? "could not be made" : err;
        if (first_error.empty()) first_error = "source \"" + c.name + "\": " + s.down_reason;
        spdlog::warn("source {} is down: {}", c.name, s.down_reason);
      }
      sources.push_back(std::move(s));
    }
  }
  hooks.board->set_sources(board);
  hooks.board->set_routes(rs.sources.empty() ? std::vector<std::string>{implicit_source_name} : rs.automatic,
                          rs.sources.empty() ? std::vector<std::string>{implicit_source_name} : rs.explicit_route);
  bool any = false;
  for (const auto& s : sources) {
    if (s.provider) {
      any = true;
      hooks.board->set_state(s.name, "ok", s.provider->describe());
    } else {
      hooks.board->set_state(s.name, "down", s.down_reason, s.down_reason);
      if (in.notify) in.notify("quickfill: source \"" + s.name + "\" is not available: " + s.down_reason);
    }
  }
  if (!any) {
    if (error) *error = first_error.empty() ? "no completion source could be made" : first_error;
    return nullptr;
  }
  if (!rs.audit_path.empty()) {
    auto log = std::make_shared<audit_log>(rs.audit_path, rs.audit_include_code);
    if (log->ok()) {
      hooks.audit = std::move(log);
    } else if (in.notify) {
      in.notify("quickfill: " + log->error() + "; calls to remote sources are not audited");
    }
  }
  auto r = std::make_unique<router>(std::move(sources), rs.automatic.empty() ? std::vector<std::string>{implicit_source_name} : rs.automatic,
                                    rs.explicit_route.empty() ? std::vector<std::string>{implicit_source_name} : rs.explicit_route,
                                    std::move(hooks));
  r->set_under_load(rs.under_load);
  return r;
}

}  // namespace qf::server::routing
