// Path-carrying decode errors (see json_decode.h).
#include "lsp/json_decode.h"

namespace qf::lsp {

std::string decode_error::message(std::string_view root) const {
  std::string full(root);
  if (!path_.empty()) {
    if (!full.empty() && path_.front() != '[') full += '.';
    full += path_;
  }
  if (full.empty()) return what_;
  return full + ": " + what_;
}

void decode_error::prepend_key(std::string_view key) {
  if (path_.empty() || path_.front() == '[')
    path_ = std::string(key) + path_;
  else
    path_ = std::string(key) + "." + path_;
}

void decode_error::prepend_index(std::size_t index) {
  std::string idx(1, '[');
  idx += std::to_string(index);
  idx += ']';
  if (path_.empty() || path_.front() == '[')
    path_ = idx + path_;
  else
    path_ = idx + "." + path_;
}

const char* kind_name(json::kind k) {
  switch (k) {
    case json::kind::null: return "null";
    case json::kind::bool_: return "boolean";
    case json::kind::int64:
    case json::kind::uint64: return "integer";
    case json::kind::double_: return "number";
    case json::kind::string: return "string";
    case json::kind::array: return "array";
    case json::kind::object: return "object";
  }
  return "value";
}

const json::object& expect_object(const json::value& v) {
  if (!v.is_object()) throw decode_error("", std::string("expected object, got ") + kind_name(v.kind()));
  return v.get_object();
}

}  // namespace qf::lsp
