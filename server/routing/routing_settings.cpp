// Reading the sources and routes of the settings (see routing_settings.h).
#include "server/routing/routing_settings.h"

#include <set>

#include <boost/json.hpp>

#include "server/routing/source_registry.h"

namespace qf::server::routing {

namespace json = boost::json;

namespace {

std::string shown(const json::value& v) {
  std::string s = json::serialize(v);
  if (s.size() > 60) s = s.substr(0, 57) + "...";
  return s;
}

bool read_limit(const json::object& q, const char* key, const std::string& where, std::int64_t* out,
                std::string* error) {
  const json::value* v = q.if_contains(key);
  if (!v || v->is_null()) return true;
  if (v->is_int64() && v->get_int64() >= 0) {
    *out = v->get_int64();
    return true;
  }
  if (v->is_uint64() && v->get_uint64() <= static_cast<std::uint64_t>(INT64_MAX)) {
    *out = static_cast<std::int64_t>(v->get_uint64());
    return true;
  }
  *error = where + ".quota." + key + ": " + shown(*v) + " is not accepted (expected a non-negative integer; 0: no limit)";
  return false;
}

bool read_route(const json::object& routes, const char* key, const std::vector<source_config>& sources,
                std::vector<std::string>* out, std::string* error) {
  const json::value* v = routes.if_contains(key);
  if (!v || v->is_null()) {
    for (const auto& s : sources) out->push_back(s.name);
    return true;
  }
  const std::string where = std::string("routes.") + key;
  if (!v->is_array()) {
    *error = where + ": " + shown(*v) + " is not an array of source names";
    return false;
  }
  std::set<std::string> seen;
  for (const json::value& n : v->get_array()) {
    if (!n.is_string()) {
      *error = where + ": " + shown(n) + " is not a source name";
      return false;
    }
    const std::string name(n.get_string());
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
  if (s.sources_json.is_null()) s.sources_json = json::array{};
  if (s.routes_json.is_null()) s.routes_json = json::object{};
  if (!s.sources_json.is_array()) {
    *error = "sources: " + shown(s.sources_json) + " is not an array of source objects";
    return false;
  }
  std::set<std::string> names;
  const json::array& arr = s.sources_json.get_array();
  for (std::size_t i = 0; i < arr.size(); ++i) {
    const std::string where = "sources[" + std::to_string(i) + "]";
    if (!arr[i].is_object()) {
      *error = where + ": " + shown(arr[i]) + " is not an object";
      return false;
    }
    const json::object& o = arr[i].get_object();
    source_config c;
    c.members = o;
    const json::value* name = o.if_contains("name");
    if (!name || !name->is_string() || name->get_string().empty()) {
      *error = where + ".name: a source needs a non-empty name";
      return false;
    }
    c.name = std::string(name->get_string());
    if (!names.insert(c.name).second) {
      *error = where + ".name: \"" + c.name + "\" is used by an earlier source";
      return false;
    }
    const std::string named = "sources[" + std::to_string(i) + "] (\"" + c.name + "\")";
    const json::value* kind = o.if_contains("kind");
    if (!kind || !kind->is_string()) {
      *error = named + ".kind: missing (one of " + kinds.names_text() + ")";
      return false;
    }
    c.kind = std::string(kind->get_string());
    const source_kind* k = kinds.find(c.kind);
    if (!k) {
      *error = named + ".kind: \"" + c.kind + "\" is not a known kind (one of " + kinds.names_text() + ")";
      return false;
    }
    if (const json::value* q = o.if_contains("quota"); q && !q->is_null()) {
      if (!q->is_object()) {
        *error = named + ".quota: " + shown(*q) + " is not an object";
        return false;
      }
      for (const auto& [qk, qv] : q->get_object()) {
        (void)qv;
        if (qk != "tokensPerHour" && qk != "tokensPerDay") {
          *error = named + ".quota." + std::string(qk) + ": unknown (tokensPerHour, tokensPerDay)";
          return false;
        }
      }
      if (!read_limit(q->get_object(), "tokensPerHour", named, &c.quota.tokens_per_hour, error)) return false;
      if (!read_limit(q->get_object(), "tokensPerDay", named, &c.quota.tokens_per_day, error)) return false;
    }
    std::string why;
    if (!k->parse(o, &why)) {
      *error = named + ": " + (why.empty() ? "not accepted by kind \"" + c.kind + "\"" : why);
      return false;
    }
    s.sources.push_back(std::move(c));
  }
  if (!s.routes_json.is_object()) {
    *error = "routes: " + shown(s.routes_json) + " is not an object ({\"automatic\": [...], \"explicit\": [...]})";
    return false;
  }
  const json::object& routes = s.routes_json.get_object();
  for (const auto& [rk, rv] : routes) {
    (void)rv;
    if (rk != "automatic" && rk != "explicit") {
      *error = "routes." + std::string(rk) + ": unknown route (automatic, explicit)";
      return false;
    }
  }
  if (!read_route(routes, "automatic", s.sources, &s.automatic, error)) return false;
  if (!read_route(routes, "explicit", s.sources, &s.explicit_route, error)) return false;
  if (s.sources.empty()) {
    s.automatic = {implicit_source_name};
    s.explicit_route = {implicit_source_name};
  }
  return true;
}

}  // namespace qf::server::routing
