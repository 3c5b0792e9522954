// Conversions of the next-edit and acceptance messages (see the header).
#include "lsp/protocol_next_edit.h"

namespace qf::lsp {

next_edit_document tag_invoke(json::value_to_tag<next_edit_document>, const json::value& v) {
  const json::object& o = expect_object(v);
  next_edit_document x{};
  read_field(o, "uri", x.uri);
  read_field(o, "version", x.version);
  return x;
}

void tag_invoke(json::value_from_tag, json::value& v, const next_edit_document& x) {
  json::object o;
  write_field(o, "uri", x.uri);
  write_field(o, "version", x.version);
  v = std::move(o);
}

next_edit_params tag_invoke(json::value_to_tag<next_edit_params>, const json::value& v) {
  const json::object& o = expect_object(v);
  next_edit_params x{};
  read_field(o, "textDocument", x.textDocument);
  read_field(o, "position", x.position);
  return x;
}

void tag_invoke(json::value_from_tag, json::value& v, const next_edit_params& x) {
  json::object o;
  write_field(o, "textDocument", x.textDocument);
  write_field(o, "position", x.position);
  v = std::move(o);
}

next_edit_item tag_invoke(json::value_to_tag<next_edit_item>, const json::value& v) {
  const json::object& o = expect_object(v);
  next_edit_item x{};
  read_field(o, "range", x.range);
  read_field(o, "newText", x.newText);
  read_field(o, "atCursor", x.atCursor);
  return x;
}

void tag_invoke(json::value_from_tag, json::value& v, const next_edit_item& x) {
  json::object o;
  write_field(o, "range", x.range);
  write_field(o, "newText", x.newText);
  write_field(o, "atCursor", x.atCursor);
  v = std::move(o);
}

next_edit_list tag_invoke(json::value_to_tag<next_edit_list>, const json::value& v) {
  const json::object& o = expect_object(v);
  next_edit_list x{};
  read_field(o, "id", x.id);
  read_field(o, "version", x.version);
  read_field(o, "format", x.format);
  read_field(o, "edits", x.edits);
  read_field(o, "reason", x.reason);
  return x;
}

void tag_invoke(json::value_from_tag, json::value& v, const next_edit_list& x) {
  json::object o;
  write_field(o, "id", x.id);
  write_field(o, "version", x.version);
  write_field(o, "format", x.format);
  write_field(o, "edits", x.edits);
  write_field(o, "reason", x.reason);
  v = std::move(o);
}

did_show_params tag_invoke(json::value_to_tag<did_show_params>, const json::value& v) {
  const json::object& o = expect_object(v);
  did_show_params x{};
  read_field(o, "id", x.id);
  read_field(o, "source", x.source);
  read_field(o, "trigger", x.trigger);
  read_field(o, "length", x.length);
  return x;
}

void tag_invoke(json::value_from_tag, json::value& v, const did_show_params& x) {
  json::object o;
  write_field(o, "id", x.id);
  write_field(o, "source", x.source);
  write_field(o, "trigger", x.trigger);
  write_field(o, "length", x.length);
  v = std::move(o);
}

did_accept_params tag_invoke(json::value_to_tag<did_accept_params>, const json::value& v) {
  const json::object& o = expect_object(v);
  did_accept_params x{};
  read_field(o, "id", x.id);
  read_field(o, "acceptedLength", x.acceptedLength);
  return x;
}

void tag_invoke(json::value_from_tag, json::value& v, const did_accept_params& x) {
  json::object o;
  write_field(o, "id", x.id);
  write_field(o, "acceptedLength", x.acceptedLength);
  v = std::move(o);
}

}  // namespace qf::lsp
