// The routing section of the settings: which completion sources exist, which
// route each request class takes, the audit log and the memory headroom.
//
// `sources` and `routes` arrive as raw JSON through the settings schema
// (server/core/settings.cpp) and are read here, each source's kind members by the
// kind's own validator (source_registry.h). Empty `sources` means one
// implicit local source built from the model settings, exactly as without
// routing. A value that cannot be read is an error: the settings parser then
// sets keep_previous and the core keeps the routing in force.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <boost/json/value.hpp>

namespace qf::server::routing {

class source_registry;

// Rolling token limits of one source (0: no limit).
struct quota_limits {
  std::int64_t tokens_per_hour = 0;
  std::int64_t tokens_per_day = 0;
  bool operator==(const quota_limits&) const = default;
};

struct source_config {
  std::string name;
  std::string kind;
  boost::json::object members;  // the whole source object, as given (its kind reads it)
  quota_limits quota;
};

// The name of the implicit source when `sources` is empty.
inline constexpr const char* implicit_source_name = "local";

struct routing_settings {
  // As given (the schema's "sources" and "routes"); read by parse_routing.
  boost::json::value sources_json = boost::json::array{};
  boost::json::value routes_json = boost::json::object{};
  std::string audit_path;           // "" : no audit log
  bool audit_include_code = false;  // code text in audit lines
  int memory_reserve_mib = 512;     // memory left free when a further local model is loaded
  // Filled by parse_routing.
  std::vector<source_config> sources;    // empty: the implicit local source
  std::vector<std::string> automatic;    // route of automatic triggers, first tried first
  std::vector<std::string> explicit_route;  // route of explicit invocations
  // Set by the settings parser when sources/routes could not be read: the
  // core keeps the routing it has.
  bool keep_previous = false;

  // Whether two settings build the same router (the audit log and the memory
  // reserve included).
  bool same_routing(const routing_settings& o) const;
};

// Reads s.sources_json and s.routes_json into s.sources / s.automatic /
// s.explicit_route. A missing route takes every source in the order given;
// each route must name known sources, each at most once. Returns false with a
// message naming the offending member.
bool parse_routing(routing_settings& s, const source_registry& kinds, std::string* error);

}  // namespace qf::server::routing
