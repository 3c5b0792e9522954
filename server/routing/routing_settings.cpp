// Reading the sources and routes of the settings (see routing_settings.h).
#include "server/routing/routing_settings.h"

#include <set>

#include <boost/json.hpp>

#include "server/routing/source_registry.h"

namespace qf::server::routing {

namespace json = boost::json;

namespace sc = schema;

const sc::object_schema& quota_schema() {
  using M = sc::member_schema;
  static const sc::object_schema s{
      "a quota",
      {
          M{.name = "tokensPerHour", .type = sc::value_type::integer, .default_value = 0, .min = 0,
            .max = 9223372036854775807.0, .expected = "a non-negative integer (0: no limit)",
            .doc = "Prompt + completion tokens this source may spend in any rolling hour (0: no limit)."},
          M{.name = "tokensPerDay", .type = sc::value_type::integer, .default_value = 0, .min = 0,
            .max = 9223372036854775807.0, .expected = "a non-negative integer (0: no limit)",
            .doc = "The same over any rolling 24 hours."},
      }};
  return s;
}

const sc::object_schema& source_schema() {
  using M = sc::member_schema;
  using T = sc::value_type;
  static const sc::object_schema s{
      "a source",
      {
          M{.name = "name", .type = T::string, .required = true, .non_empty = true,
            .doc = "The source's name, unique; routes, the log, the board and the audit log use it."},
          M{.name = "kind", .type = T::string, .required = true,
            .expected = "a kind: `local`, `openai`, `llama-infill`",
            .doc = "What answers: `local` runs a GGUF model here; `openai` asks an OpenAI-compatible "
                   "`/v1/completions`, `llama-infill` llama-server's `/infill` (docs/remote.md). The kind's own "
                   "members follow in the tables below."},
          M{.name = "quota", .type = T::object, .default_value = boost::json::object{{"tokensPerHour", 0},
                                                                                   {"tokensPerDay", 0}},
            .members = &quota_schema(), .expected = "an object: `tokensPerHour`, `tokensPerDay` (below)",
            .doc = "`{\"tokensPerHour\", \"tokensPerDay\"}`: rolling token limits (0: no limit); a source "
                   "that has spent its quota is skipped until the window frees (docs/routing.md)."},
      }};
  return s;
}

const sc::object_schema& routes_schema() {
  using M = sc::member_schema;
  using T = sc::value_type;
  static const sc::object_schema s{
      "the routes",
      {
          M{.name = "automatic", .type = T::string_list, .default_doc = "every source, in order",
            .expected = "a non-empty array of source names",
            .doc = "The sources of automatic triggers, first tried first; each named at most once."},
          M{.name = "explicit", .type = T::string_list, .default_doc = "every source, in order",
            .expected = "a non-empty array of source names",
            .doc = "The sources of explicit invocations, the same way."},
          M{.name = "underLoad", .type = T::string_list, .default_doc = "none",
            .expected = "a non-empty array of source names",
            .doc = "Faster sources for automatic triggers under load: when the first source of the automatic route "
                   "that is up estimates that a request would break its deadline (`completion.degrade`), these are "
                   "tried first, then the automatic route. Absent: automatic requests are only degraded."},
      }};
  return s;
}

namespace {

bool read_route(const json::object& routes, const char* key, const std::vector<source_config>& sources,
                std::vector<std::string>* out, std::string* error) {
  const json::value* v = routes.if_contains(key);
  if (!v || v->is_null()) {
    for (const auto& s : sources) out->push_back(s.name);
    return true;
  }
  const std::string where = std::string("routes.") + key;
  std::set<std::string> seen;
  const json::array& names = v->get_array();  // validated: an array of non-empty strings
  for (std::size_t i = 0; i < names.size(); ++i) {
    const std::string name(names[i].get_string());
    bool known = false;
    for (const auto& s : sources) known = known || s.name == name;
    if (sources.empty() && name == implicit_source_name) known = true;
    if (!known) {
      *error = where + ": no source is named \"" + name + "\"";
      return false;
    }
    if (!seen.insert(name).second) {
      *error = where + ": \"" + name + "\" is named twice";
      return false;
    }
    out->push_back(name);
  }
  if (out->empty()) {
    *error = where + ": the route is empty (name at least one source)";
    return false;
  }
  return true;
}

}  // namespace

bool routing_settings::same_routing(const routing_settings& o) const {
  return sources_json == o.sources_json && routes_json == o.routes_json && audit_path == o.audit_path &&
         audit_include_code == o.audit_include_code && memory_reserve_mib == o.memory_reserve_mib;
}

bool parse_routing(routing_settings& s, const source_registry& kinds, std::string* error) {
  std::string sink;
  if (!error) error = &sink;
  s.sources.clear();
  s.automatic.clear();
  s.explicit_route.clear();
  s.under_load.clear();
  if (s.sources_json.is_null()) s.sources_json = json::array{};
  if (s.routes_json.is_null()) s.routes_json = json::object{};
  if (!s.sources_json.is_array()) {
    *error = "sources: " + sc::shown(s.sources_json) + " is not accepted (expected an array of source objects)";
    return false;
  }
  // The members every source has; `kind` is one of this registry's.
  const std::vector<std::string> kind_names = kinds.names();
  sc::object_schema common = source_schema();
  for (sc::member_schema& m : common.members)
    if (m.name == "kind") {
      m.expected = {};
      for (const std::string& n : kind_names) m.choices.push_back(n);
    }
  std::set<std::string> names;
  const json::array& arr = s.sources_json.get_array();
  for (std::size_t i = 0; i < arr.size(); ++i) {
    const std::string where = sc::item_path("sources", i);
    // The kind reads the other members: they are not unknown here.
    std::vector<std::string_view> others;
    if (arr[i].is_object())
      for (const auto& [k, v] : arr[i].get_object()) {
        (void)v;
        if (!common.find(k)) others.push_back(k);
      }
    auto v = sc::validate_object(common, arr[i], where, error, others);
    if (!v) return false;
    source_config c;
    c.members = arr[i].get_object();
    c.name = sc::get_string(*v, "name");
    if (!names.insert(c.name).second) {
      *error = where + ".name: \"" + c.name + "\" is used by an earlier source";
      return false;
    }
    c.kind = sc::get_string(*v, "kind");
    const json::object& quota = v->at("quota").get_object();
    c.quota.tokens_per_hour = sc::get_int(quota, "tokensPerHour");
    c.quota.tokens_per_day = sc::get_int(quota, "tokensPerDay");
    const source_kind* k = kinds.find(c.kind);
    std::string why;
    if (!k->parse(c.members, where, &why)) {
      *error = why.empty() ? where + ": not accepted by kind \"" + c.kind + "\"" : why;
      return false;
    }
    s.sources.push_back(std::move(c));
  }
  auto routes = sc::validate_object(routes_schema(), s.routes_json, "routes", error);
  if (!routes) return false;
  if (!read_route(*routes, "automatic", s.sources, &s.automatic, error)) return false;
  if (!read_route(*routes, "explicit", s.sources, &s.explicit_route, error)) return false;
  if (const json::value* u = routes->if_contains("underLoad"); u && !u->is_null())
    if (!read_route(*routes, "underLoad", s.sources, &s.under_load, error)) return false;
  if (s.sources.empty()) {
    s.automatic = {implicit_source_name};
    s.explicit_route = {implicit_source_name};
  }
  return true;
}

}  // namespace qf::server::routing
