// The routing section of the settings: which completion sources exist, which
// route each request class takes, the audit log and the memory headroom.
//
// `sources` and `routes` arrive as raw JSON through the settings schema
// (server/core/settings.cpp) and are read here with the settings validator
// (completion/api/setting_schema.h): the members every source has against
// source_schema(), each kind's members by the kind (source_registry.h), the
// routes against routes_schema(). Empty `sources` means one
// implicit local source built from the model settings, exactly as without
// routing. A value that cannot be read is an error: the settings parser then
// sets keep_previous and the core keeps the routing in force.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <boost/json/value.hpp>

#include "server/completion/api/setting_schema.h"

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
  // Where automatic requests go when the automatic route's first source
  // estimates it would break their deadline (completion.degrade); empty: nowhere.
  std::vector<std::string> under_load;
  // Set by the settings parser when sources/routes could not be read: the
  // core keeps the routing it has.
  bool keep_previous = false;

  // Whether two settings build the same router (the audit log and the memory
  // reserve included).
  bool same_routing(const routing_settings& o) const;
};

// The members every source has (name, kind, quota); `kind`'s choices are the
// registry's kinds, whose own members the kinds declare (source_kind::members).
const schema::object_schema& source_schema();
// A source's quota: tokensPerHour, tokensPerDay.
const schema::object_schema& quota_schema();
// The routes object: automatic, explicit, underLoad.
const schema::object_schema& routes_schema();

// Reads s.sources_json and s.routes_json into s.sources / s.automatic /
// s.explicit_route. A missing route takes every source in the order given;
// each route must name known sources, each at most once. Returns false with a
// message naming the offending member.
bool parse_routing(routing_settings& s, const source_registry& kinds, std::string* error);

}  // namespace qf::server::routing
