// The protocol structs with conversions of their own (see protocol.h; the
// others are described structs, converted by json_decode.h), and the lenient
// look-ups.
#include "lsp/protocol.h"

namespace qf::lsp {

// $/cancelRequest ids are integers or strings.
cancel_params tag_invoke(json::value_to_tag<cancel_params>, const json::value& v) {
  const json::object& o = expect_object(v);
  cancel_params x{};
  read_field(o, "id", x.id);
  if (!x.id.is_int64() && !x.id.is_uint64() && !x.id.is_string())
    throw decode_error("id", std::string("expected integer or string, got ") + kind_name(x.id.kind()));
  return x;
}

void tag_invoke(json::value_from_tag, json::value& v, const cancel_params& x) {
  v = json::object{{"id", x.id}};
}

const json::value* find_path(const json::value& root, std::string_view path) {
  const json::value* cur = &root;
  while (!path.empty()) {
    std::size_t dot = path.find('.');
    std::string_view key = path.substr(0, dot);
    path = dot == std::string_view::npos ? std::string_view() : path.substr(dot + 1);
    if (!cur->is_object()) return nullptr;
    cur = cur->get_object().if_contains(key);
    if (!cur) return nullptr;
  }
  return cur;
}

bool bool_at(const json::value& root, std::string_view path, bool fallback) {
  const json::value* v = find_path(root, path);
  return v && v->is_bool() ? v->get_bool() : fallback;
}

std::vector<std::string> strings_at(const json::value& root, std::string_view path) {
  std::vector<std::string> out;
  const json::value* v = find_path(root, path);
  if (!v || !v->is_array()) return out;
  for (const auto& e : v->get_array())
    if (e.is_string()) out.emplace_back(e.get_string());
  return out;
}

}  // namespace qf::lsp
