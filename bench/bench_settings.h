// --settings JSON for the benches that start quickfill: a JSON object of
// quickfill settings merged into the bench's own (one level deep: a section
// such as "completion" is merged key by key, anything else replaced).
#pragma once

#include <string_view>

#include <boost/json.hpp>

namespace qf::bench {

// False (and `into` unchanged) when `text` is not a JSON object.
inline bool merge_settings(boost::json::object& into, std::string_view text) {
  boost::system::error_code ec;
  boost::json::value v = boost::json::parse(text, ec);
  if (ec || !v.is_object()) return false;
  for (auto& [k, x] : v.as_object()) {
    if (x.is_object() && into.contains(k) && into[k].is_object())
      for (auto& [k2, x2] : x.as_object()) into[k].as_object()[k2] = x2;
    else
      into[k] = x;
  }
  return true;
}

}  // namespace qf::bench
