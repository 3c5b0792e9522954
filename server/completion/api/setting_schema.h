// The schema of a setting and the one validator every setting goes through.
//
// A member_schema describes one value: its type (boolean, integer, number,
// string, array of strings, object, array of objects), its range or its
// allowed strings (with old names accepted as aliases of the current ones),
// its default, whether it is required, and a one-line doc; an object_schema
// lists the members of an object. validate() checks a JSON value against a
// member and returns it normalized (aliases resolved, 32.0 read as 32,
// defaults filled into objects); validate_object() does the same for the
// members of an object and refuses unknown members. Every refusal is one
// message in one form, naming the value's path from the settings root:
//   sources[1].maxTokens: 0 is not accepted (expected an integer from 1 to 4096)
//   sources[1].colour: unknown member of a remote source (known: endpoints, model, ...)
//   sources[1].endpoints: missing (expected a non-empty array of ...)
// A member's own rule beyond type and range (a URL, an absolute path) is its
// `check`, whose reason follows the path the same way.
//
// The parts that own structured settings declare their members' schema next
// to their code (routing/, local_source, remote_options) and read the
// validated values from the returned object; server/core's settings schema
// assembles them and renders docs/configuration.md (render_members_markdown).
// This sits in qf_completion_api so that every server/ library can use it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <boost/json/value.hpp>

namespace qf::server::schema {

enum class value_type { boolean, integer, number, string, string_list, object, object_list };

struct object_schema;

struct member_schema {
  std::string_view name{};
  value_type type = value_type::string;
  boost::json::value default_value{};  // null: none; an absent member stays absent
  std::string_view default_doc{};    // what "absent" means when there is no default value ("the engine's")
  double min = 0, max = 0;           // integers and numbers: the accepted range
  std::vector<std::string_view> choices{};  // strings (and string lists' items): allowed values (empty: any)
  // Old names still accepted for a choice: {alias, choice}; the validated value is the choice.
  std::vector<std::pair<std::string_view, std::string_view>> aliases{};
  bool required = false;
  bool non_empty = false;       // strings, string lists, object lists: not empty
  bool drop_bad_items = false;  // string lists: items that are not non-empty strings are dropped, duplicates too
  std::size_t max_items = 0;    // lists: at most this many (0: no limit)
  const object_schema* members = nullptr;  // objects, object lists' items
  // A further rule for a string (each item of a string list): false with the
  // reason (never the value itself: it may be a secret pasted in the wrong place).
  bool (*check)(std::string_view value, std::string* why) = nullptr;
  std::string_view expected{};  // overrides the generated "what is accepted" text
  std::string_view doc{};     // meaning, and why the default
};

struct object_schema {
  std::string_view title{};  // "a remote source", for messages
  std::vector<member_schema> members{};
  const member_schema* find(std::string_view name) const;
};

// "boolean", "integer", "number", "string", "array", "object".
std::string type_name(const member_schema& m);
// What is accepted: for messages ("an integer from 1 to 4096", "one of \"auto\", \"cpu\"")
// or for the docs ("1 to 4096", "`auto`, `cpu`"; aliases named).
std::string accepted(const member_schema& m, bool markdown);
// The default as JSON text ("32", "\"auto\""), "" when there is none.
std::string default_text(const member_schema& m);

// `v` checked against `m` and normalized; nullopt with *error (see above).
// `path` names the value ("sources[1].maxTokens").
std::optional<boost::json::value> validate(const member_schema& m, const boost::json::value& v,
                                           const std::string& path, std::string* error);

// The members of object `v` checked against `s` (a member given as null is
// absent), absent members with a default filled in, unknown members refused
// except those in `also` (read by someone else, e.g. a source's name and kind).
// `path` names the object ("sources[1]"; "" at the root).
std::optional<boost::json::object> validate_object(const object_schema& s, const boost::json::value& v,
                                                   const std::string& path, std::string* error,
                                                   const std::vector<std::string_view>& also = {});

// "a.b" (or "b" when a is empty), "a[3]".
std::string member_path(const std::string& path, std::string_view member);
std::string item_path(const std::string& path, std::size_t i);

// A value for a message: at most 80 bytes, numbers as people write them.
std::string shown(const boost::json::value& v);
std::string json_text(const boost::json::value& v);
std::string format_number(double d);

// Reading a validated object (members validated, so the types are right).
bool get_bool(const boost::json::object& o, std::string_view name, bool absent = false);
std::int64_t get_int(const boost::json::object& o, std::string_view name, std::int64_t absent = 0);
double get_number(const boost::json::object& o, std::string_view name, double absent = 0);
std::string get_string(const boost::json::object& o, std::string_view name, std::string absent = "");
std::vector<std::string> get_strings(const boost::json::object& o, std::string_view name);

// `text` as a markdown table cell: a pipe would end the cell, also inside a code span.
std::string markdown_cell(std::string_view text);

// The members of `s` as a markdown table: | member | type | default | accepted | meaning |.
std::string render_members_markdown(const object_schema& s);

}  // namespace qf::server::schema
