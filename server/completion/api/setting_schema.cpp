// The one settings validator and the reference tables (see setting_schema.h).
#include "server/completion/api/setting_schema.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>

#include <boost/json.hpp>

namespace qf::server::schema {

namespace json = boost::json;

const member_schema* object_schema::find(std::string_view name) const {
  for (const member_schema& m : members)
    if (m.name == name) return &m;
  return nullptr;
}

std::string format_number(double d) {
  if (d == std::floor(d) && std::fabs(d) < 1e15) return std::to_string(static_cast<long long>(d));
  char buf[64];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, d);
  return ec == std::errc() ? std::string(buf, end) : std::to_string(d);
}

std::string json_text(const json::value& v) {
  if (v.is_double()) return format_number(v.get_double());
  return json::serialize(v);
}

std::string shown(const json::value& v) {
  std::string s = json_text(v);
  if (s.size() <= 80) return s;
  std::size_t n = 80;  // cut at a UTF-8 character boundary
  while (n > 0 && (static_cast<unsigned char>(s[n]) & 0xC0) == 0x80) --n;
  s.resize(n);
  return s + "...";
}

std::string member_path(const std::string& path, std::string_view member) {
  return path.empty() ? std::string(member) : path + "." + std::string(member);
}

std::string item_path(const std::string& path, std::size_t i) { return path + "[" + std::to_string(i) + "]"; }

std::string type_name(const member_schema& m) {
  switch (m.type) {
    case value_type::boolean: return "boolean";
    case value_type::integer: return "integer";
    case value_type::number: return "number";
    case value_type::string: return "string";
    case value_type::object: return "object";
    case value_type::string_list:
    case value_type::object_list: return "array";
  }
  return "string";
}

namespace {

// Built by appending: GCC 12 warns, falsely, about "literal" + std::string (-Wrestrict).
std::string quoted(std::string_view v, bool markdown) {
  const char q = markdown ? '`' : '"';
  std::string out(1, q);
  out += v;
  out += q;
  return out;
}

std::string choice_list(const member_schema& m, bool markdown) {
  std::string out;
  for (std::size_t i = 0; i < m.choices.size(); ++i) {
    if (i) out += ", ";
    out += quoted(m.choices[i], markdown);
  }
  return out;
}

std::string alias_list(const member_schema& m) {
  std::string out;
  for (const auto& [alias, choice] : m.aliases) {
    if (!out.empty()) out += ", ";
    out += quoted(alias, true);
    out += " for ";
    out += quoted(choice, true);
  }
  return out;
}

}  // namespace

std::string accepted(const member_schema& m, bool markdown) {
  if (!m.expected.empty()) return std::string(m.expected);
  const std::string range = format_number(m.min) + " to " + format_number(m.max);
  switch (m.type) {
    case value_type::boolean: return markdown ? "`true`, `false`" : "true or false";
    case value_type::integer: return (markdown ? "" : "an integer from ") + range;
    case value_type::number: return (markdown ? "" : "a number from ") + range;
    case value_type::string: {
      if (m.choices.empty()) return markdown ? (m.non_empty ? "a non-empty string" : "any string")
                                             : (m.non_empty ? "a non-empty string" : "a string");
      std::string out = (markdown ? "" : "one of ") + choice_list(m, markdown);
      if (markdown && !m.aliases.empty()) out += " (also " + alias_list(m) + ")";
      return out;
    }
    case value_type::string_list: {
      std::string out = markdown ? "array of " : (m.non_empty ? "a non-empty array of " : "an array of ");
      if (m.max_items) out += "at most " + std::to_string(m.max_items) + " ";
      out += m.choices.empty() ? "strings" : "strings among " + choice_list(m, markdown);
      if (markdown && m.non_empty) out += ", not empty";
      return out;
    }
    case value_type::object: return markdown ? "object" : "an object";
    case value_type::object_list: return markdown ? "array of objects" : "an array of objects";
  }
  return "";
}

std::string default_text(const member_schema& m) {
  return m.default_value.is_null() ? "" : json_text(m.default_value);
}

namespace {

bool refuse(const json::value& v, const member_schema& m, const std::string& path, std::string* error) {
  if (error) *error = path + ": " + shown(v) + " is not accepted (expected " + accepted(m, false) + ")";
  return false;
}

bool refuse_why(const std::string& path, const std::string& why, std::string* error) {
  if (error) *error = path + ": " + why;
  return false;
}

// A string against the choices (aliases resolved) and the check; *out the accepted text.
bool string_ok(const member_schema& m, std::string_view text, const json::value& shown_as, const std::string& path,
               std::string* out, std::string* error) {
  if (m.non_empty && text.empty()) return refuse(shown_as, m, path, error);
  std::string_view value = text;
  if (!m.choices.empty()) {
    for (const auto& [alias, choice] : m.aliases)
      if (alias == text) value = choice;
    if (std::find(m.choices.begin(), m.choices.end(), value) == m.choices.end())
      return refuse(shown_as, m, path, error);
  }
  std::string why;
  if (m.check && !m.check(value, &why)) return refuse_why(path, why, error);
  *out = std::string(value);
  return true;
}

}  // namespace

std::optional<json::value> validate(const member_schema& m, const json::value& v, const std::string& path,
                                    std::string* error) {
  switch (m.type) {
    case value_type::boolean:
      if (!v.is_bool()) return refuse(v, m, path, error), std::nullopt;
      return v;
    case value_type::integer: {
      double d = 0;
      if (v.is_int64()) d = static_cast<double>(v.get_int64());
      else if (v.is_uint64()) d = static_cast<double>(v.get_uint64());
      else if (v.is_double() && std::isfinite(v.get_double()) && v.get_double() == std::floor(v.get_double()))
        d = v.get_double();  // 32.0 from encoders without integers
      else
        return refuse(v, m, path, error), std::nullopt;
      if (d < m.min || d > m.max) return refuse(v, m, path, error), std::nullopt;
      if (v.is_int64()) return v;
      // Past the int64 range (the top of a range given as 2^63): not representable.
      if ((v.is_uint64() && v.get_uint64() > static_cast<std::uint64_t>(INT64_MAX)) || std::fabs(d) >= 9.2233720368547758e18)
        return refuse(v, m, path, error), std::nullopt;
      if (v.is_uint64()) return json::value(static_cast<std::int64_t>(v.get_uint64()));
      return json::value(static_cast<std::int64_t>(d));
    }
    case value_type::number: {
      if (!v.is_number()) return refuse(v, m, path, error), std::nullopt;
      const double d = v.to_number<double>();
      if (!(d >= m.min && d <= m.max)) return refuse(v, m, path, error), std::nullopt;
      return json::value(d);
    }
    case value_type::string: {
      if (!v.is_string()) return refuse(v, m, path, error), std::nullopt;
      std::string out;
      if (!string_ok(m, v.get_string(), v, path, &out, error)) return std::nullopt;
      return json::value(out);
    }
    case value_type::string_list: {
      if (!v.is_array()) return refuse(v, m, path, error), std::nullopt;
      const json::array& a = v.get_array();
      json::array out;
      for (std::size_t i = 0; i < a.size(); ++i) {
        const json::value& e = a[i];
        if (m.drop_bad_items) {
          if (!e.is_string() || e.get_string().empty()) continue;
          if (std::find(out.begin(), out.end(), e) == out.end()) out.push_back(e);
          continue;
        }
        member_schema item = m;  // the item's rules: a non-empty string (of the choices), the check
        item.type = value_type::string;
        item.non_empty = true;
        item.expected = {};
        std::string text;
        if (!e.is_string()) return refuse(e, item, item_path(path, i), error), std::nullopt;
        if (!string_ok(item, e.get_string(), e, item_path(path, i), &text, error)) return std::nullopt;
        out.push_back(json::value(text));
      }
      if ((m.non_empty && out.empty()) || (m.max_items && out.size() > m.max_items))
        return refuse(v, m, path, error), std::nullopt;
      return json::value(std::move(out));
    }
    case value_type::object: {
      if (!m.members) {
        if (!v.is_object()) return refuse(v, m, path, error), std::nullopt;
        return v;
      }
      auto o = validate_object(*m.members, v, path, error);
      if (!o) return std::nullopt;
      return json::value(std::move(*o));
    }
    case value_type::object_list: {
      if (!v.is_array()) return refuse(v, m, path, error), std::nullopt;
      const json::array& a = v.get_array();
      if ((m.non_empty && a.empty()) || (m.max_items && a.size() > m.max_items))
        return refuse(v, m, path, error), std::nullopt;
      json::array out;
      for (std::size_t i = 0; i < a.size(); ++i) {
        if (!m.members) {
          if (!a[i].is_object()) {
            if (error) *error = item_path(path, i) + ": " + shown(a[i]) + " is not accepted (expected an object)";
            return std::nullopt;
          }
          out.push_back(a[i]);
          continue;
        }
        auto o = validate_object(*m.members, a[i], item_path(path, i), error);
        if (!o) return std::nullopt;
        out.push_back(json::value(std::move(*o)));
      }
      return json::value(std::move(out));
    }
  }
  return std::nullopt;
}

std::optional<json::object> validate_object(const object_schema& s, const json::value& v, const std::string& path,
                                            std::string* error, const std::vector<std::string_view>& also) {
  if (!v.is_object()) {
    if (error) *error = (path.empty() ? std::string("the value") : path) + ": " + shown(v) +
                        " is not accepted (expected an object)";
    return std::nullopt;
  }
  const json::object& o = v.get_object();
  for (const auto& [k, val] : o) {
    (void)val;
    if (s.find(k) || std::find(also.begin(), also.end(), std::string_view(k)) != also.end()) continue;
    std::string known;
    for (const member_schema& m : s.members) known += std::string(known.empty() ? "" : ", ") + std::string(m.name);
    if (error) *error = member_path(path, k) + ": unknown member of " + std::string(s.title) + " (known: " + known + ")";
    return std::nullopt;
  }
  json::object out;
  for (const member_schema& m : s.members) {
    const json::value* given = o.if_contains(m.name);
    if (!given || given->is_null()) {
      if (m.required) {
        if (error) *error = member_path(path, m.name) + ": missing (expected " + accepted(m, false) + ")";
        return std::nullopt;
      }
      if (!m.default_value.is_null()) out[m.name] = m.default_value;
      continue;
    }
    auto checked = validate(m, *given, member_path(path, m.name), error);
    if (!checked) return std::nullopt;
    out[m.name] = std::move(*checked);
  }
  for (std::string_view a : also)
    if (const json::value* given = o.if_contains(a)) out[a] = *given;
  return out;
}

bool get_bool(const json::object& o, std::string_view name, bool absent) {
  const json::value* v = o.if_contains(name);
  return v && v->is_bool() ? v->get_bool() : absent;
}

std::int64_t get_int(const json::object& o, std::string_view name, std::int64_t absent) {
  const json::value* v = o.if_contains(name);
  return v && v->is_int64() ? v->get_int64() : absent;
}

double get_number(const json::object& o, std::string_view name, double absent) {
  const json::value* v = o.if_contains(name);
  return v && v->is_number() ? v->to_number<double>() : absent;
}

std::string get_string(const json::object& o, std::string_view name, std::string absent) {
  const json::value* v = o.if_contains(name);
  return v && v->is_string() ? std::string(v->get_string()) : absent;
}

std::vector<std::string> get_strings(const json::object& o, std::string_view name) {
  std::vector<std::string> out;
  const json::value* v = o.if_contains(name);
  if (v && v->is_array())
    for (const json::value& e : v->get_array())
      if (e.is_string()) out.emplace_back(e.get_string());
  return out;
}

std::string markdown_cell(std::string_view text) {
  std::string out;
  for (char c : text) {
    if (c == '|') out += '\\';
    out += c;
  }
  return out;
}

std::string render_members_markdown(const object_schema& s) {
  std::string out = "| member | type | default | accepted | meaning |\n|---|---|---|---|---|\n";
  for (const member_schema& m : s.members) {
    std::string def = m.required                  ? "required"
                      : !m.default_value.is_null() ? quoted(default_text(m), true)
                      : m.default_doc.empty()      ? "none"
                                                   : std::string(m.default_doc);
    out += "| ";
    out += quoted(markdown_cell(m.name), true);
    out += " | ";
    out += type_name(m);
    out += " | ";
    out += markdown_cell(def);
    out += " | ";
    out += markdown_cell(accepted(m, true));
    out += " | ";
    out += markdown_cell(m.doc);
    out += " |\n";
  }
  return out;
}

}  // namespace qf::server::schema
