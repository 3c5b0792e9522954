// Strict decoding of JSON into typed structs, with errors that name the
// offending JSON path ("params.position.line: expected integer").
//
// A protocol struct lists its members once, with BOOST_DESCRIBE_STRUCT (the
// member name is the JSON key, the listed order the written order); the
// tag_invoke templates at the bottom convert every described struct by
// calling read_field() / write_field() for each member. A struct with rules of
// its own declares QF_LSP_CONVERSIONS and writes the pair by hand.
// read_field() checks the JSON kind against the C++ type before converting, so
// a wrong type never becomes a silent default; nested failures are re-thrown
// with the key (or "[index]") prepended, building the full path on the way
// out. Missing required members and null for a non-optional member are errors;
// std::optional members may be absent or null. Unknown keys are ignored (LSP
// clients send many).
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include <boost/describe/class.hpp>
#include <boost/describe/members.hpp>
#include <boost/json.hpp>
#include <boost/mp11/algorithm.hpp>

namespace qf::lsp {

namespace json = boost::json;

class decode_error : public std::runtime_error {
 public:
  decode_error(std::string path, std::string what)
      : std::runtime_error(what), path_(std::move(path)), what_(std::move(what)) {}
  const std::string& path() const { return path_; }
  const std::string& problem() const { return what_; }
  // "a.b[2].c: expected integer" (or just the problem when the path is empty).
  std::string message(std::string_view root = {}) const;
  void prepend_key(std::string_view key);
  void prepend_index(std::size_t index);

 private:
  std::string path_;
  std::string what_;
};

const char* kind_name(json::kind k);

template <class T> struct is_optional : std::false_type {};
template <class T> struct is_optional<std::optional<T>> : std::true_type {};
template <class T> struct is_vector : std::false_type {};
template <class T, class A> struct is_vector<std::vector<T, A>> : std::true_type {};

// Converts one JSON value into `out`, throwing decode_error (path relative to v).
template <class T>
void decode_value(const json::value& v, T& out) {
  if constexpr (std::is_same_v<T, json::value>) {
    out = v;
  } else if constexpr (std::is_same_v<T, json::object>) {
    if (!v.is_object()) throw decode_error("", std::string("expected object, got ") + kind_name(v.kind()));
    out = v.get_object();
  } else if constexpr (std::is_same_v<T, bool>) {
    if (!v.is_bool()) throw decode_error("", std::string("expected boolean, got ") + kind_name(v.kind()));
    out = v.get_bool();
  } else if constexpr (std::is_integral_v<T>) {
    std::int64_t x = 0;
    if (v.is_int64()) {
      x = v.get_int64();
    } else if (v.is_uint64() && v.get_uint64() <= static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
      x = static_cast<std::int64_t>(v.get_uint64());
    } else {
      throw decode_error("", std::string("expected integer, got ") + kind_name(v.kind()));
    }
    if (x < static_cast<std::int64_t>(std::numeric_limits<T>::min()) ||
        (x > 0 && static_cast<std::uint64_t>(x) > static_cast<std::uint64_t>(std::numeric_limits<T>::max())))
      throw decode_error("", "integer " + std::to_string(x) + " out of range");
    out = static_cast<T>(x);
  } else if constexpr (std::is_floating_point_v<T>) {
    if (!v.is_number()) throw decode_error("", std::string("expected number, got ") + kind_name(v.kind()));
    out = static_cast<T>(v.to_number<double>());
  } else if constexpr (std::is_same_v<T, std::string>) {
    if (!v.is_string()) throw decode_error("", std::string("expected string, got ") + kind_name(v.kind()));
    out = std::string(v.get_string());
  } else if constexpr (is_optional<T>::value) {
    if (v.is_null()) {
      out.reset();
    } else {
      typename T::value_type inner{};
      decode_value(v, inner);
      out = std::move(inner);
    }
  } else if constexpr (is_vector<T>::value) {
    if (!v.is_array()) throw decode_error("", std::string("expected array, got ") + kind_name(v.kind()));
    const auto& arr = v.get_array();
    out.clear();
    out.reserve(arr.size());
    for (std::size_t i = 0; i < arr.size(); ++i) {
      typename T::value_type elem{};
      try {
        decode_value(arr[i], elem);
      } catch (decode_error& e) {
        e.prepend_index(i);
        throw;
      }
      out.push_back(std::move(elem));
    }
  } else {
    // A protocol struct: its tag_invoke reads the members.
    if (!v.is_object()) throw decode_error("", std::string("expected object, got ") + kind_name(v.kind()));
    out = json::value_to<T>(v);
  }
}

// Reads member `key` of `obj` into `out`. Optional members may be missing.
template <class T>
void read_field(const json::object& obj, std::string_view key, T& out) {
  const json::value* v = obj.if_contains(key);
  if (!v) {
    if constexpr (is_optional<T>::value) {
      out.reset();
      return;
    } else {
      throw decode_error(std::string(key), "missing required field");
    }
  }
  try {
    decode_value(*v, out);
  } catch (decode_error& e) {
    e.prepend_key(key);
    throw;
  }
}

// The object behind a value about to be decoded as a struct.
const json::object& expect_object(const json::value& v);

// Decodes a whole value (e.g. a request's params) into T; errors carry `root`
// ("params") as the first path element.
template <class T>
T decode(const json::value& v, std::string_view root, std::string* error) {
  T out{};
  try {
    decode_value(v, out);
  } catch (decode_error& e) {
    if (error) *error = e.message(root);
    throw;
  }
  return out;
}

// Declares the hand-written conversions of protocol struct T (in a .cpp, with
// read_field/write_field): value_to<T> and value_from.
#define QF_LSP_CONVERSIONS(T)                                  \
  T tag_invoke(json::value_to_tag<T>, const json::value& v);   \
  void tag_invoke(json::value_from_tag, json::value& v, const T& x)

// Writes `value` under `key` unless it is an empty optional.
template <class T>
void write_field(json::object& obj, std::string_view key, const T& value) {
  if constexpr (is_optional<T>::value) {
    if (value) obj[key] = json::value_from(*value);
  } else {
    obj[key] = json::value_from(value);
  }
}

// A struct whose members BOOST_DESCRIBE_STRUCT lists.
template <class T>
concept described_struct = boost::describe::has_describe_members<T>::value;

// value_to<T>: every listed member read with read_field, in the listed order.
template <described_struct T>
T tag_invoke(json::value_to_tag<T>, const json::value& v) {
  const json::object& o = expect_object(v);
  T x{};
  boost::mp11::mp_for_each<boost::describe::describe_members<T, boost::describe::mod_public>>(
      [&](auto m) { read_field(o, m.name, x.*m.pointer); });
  return x;
}

// value_from: every listed member written with write_field, in the listed order.
template <described_struct T>
void tag_invoke(json::value_from_tag, json::value& v, const T& x) {
  json::object o;
  boost::mp11::mp_for_each<boost::describe::describe_members<T, boost::describe::mod_public>>(
      [&](auto m) { write_field(o, m.name, x.*m.pointer); });
  v = std::move(o);
}

}  // namespace qf::lsp
