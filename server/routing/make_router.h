// Builds the router from the routing settings: each source made by its kind
// (source_registry.h), in the order of `sources`, local models checked
// against memory from the second one on (memory_fit.h). Without sources it
// makes the one implicit local source from the model settings, which is the
// server's behaviour without routing. A source that cannot be made is kept
// as down (the user is told, once per build, why) and the routes pass over
// it; when no source at all can be made the result is nullptr with *error,
// as a failed model load was before.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "server/completion/api/completion_provider.h"
#include "server/routing/routing_settings.h"
#include "server/routing/source_board.h"
#include "server/routing/source_registry.h"

namespace qf::server::routing {

struct router_inputs {
  make_context context;              // base options of the implicit source, the local factory, the resolver
  routing_settings settings;         // parsed (parse_routing)
  std::shared_ptr<source_board> board;  // the core's; null: a private one
  std::function<void(const std::string&)> notify;  // messages for the user (window/showMessage)
  const source_registry* kinds = nullptr;          // null: builtin_kinds()
  std::function<source_board::clock::time_point()> now;  // quota windows' clock (null: steady_clock)
};

std::unique_ptr<completion_provider> make_router(const router_inputs& in, std::string* error);

}  // namespace qf::server::routing
