// The settings reference of docs/configuration.md, rendered from the schema
// (see settings.h): one table per group, in schema order; each key's meaning
// says who may set it when that is not everyone (setting_trust).
#include <string>
#include <vector>

#include "server/core/settings.h"

namespace qf::server {

namespace {

// A table cell: a pipe would end the cell, also inside a code span.
std::string cell(std::string_view text) {
  std::string out;
  for (char c : text) {
    if (c == '|') out += '\\';
    out += c;
  }
  return out;
}

}  // namespace

std::string render_settings_markdown() {
  std::string out(settings_doc_begin);
  out += "\n";
  std::string_view group;
  for (const setting_spec& s : settings_schema()) {
    if (s.group != group) {
      group = s.group;
      out += "\n### " + std::string(group) + "\n\n";
      out += "| key | type | default | accepted | meaning |\n";
      out += "|---|---|---|---|---|\n";
    }
    std::string doc(s.doc);
    if (s.trust == setting_trust::user_file)
      doc += " **User config file only** (docs/security.md): ignored when the editor sends it.";
    else if (s.trust == setting_trust::bare_name)
      doc += " **A path only in the user config file** (docs/security.md); from the editor, a bare name in the "
             "models folder.";
    else if (s.trust == setting_trust::additive)
      doc += " The editor's values are added to the user config file's (or the default) list, never replacing it.";
    out += "| `" + cell(s.key) + "` | " + s.type_name() + " | `" + cell(s.default_json()) + "` | " +
           cell(s.accepted(true)) + " | " + cell(doc) + " |\n";
  }
  out += "\n";
  out += settings_doc_end;
  out += "\n";
  return out;
}

}  // namespace qf::server
