// The settings reference of docs/configuration.md, rendered from the schema
// (see settings.h): one table per group, in schema order; each key's meaning
// says who may set it when that is not everyone (setting_trust). Then the
// members of the structured keys, from the schemas their owners declare:
// every source's (routing_settings.h), each kind's (source_kind::members),
// the quota's and the routes'.
#include <algorithm>
#include <string>
#include <vector>

#include "server/completion/api/setting_schema.h"
#include "server/core/settings.h"
#include "server/routing/source_registry.h"

namespace qf::server {

namespace {

// The members of `sources`' objects and of `routes`.
std::string render_structured_markdown() {
  std::string out =
      "\n### Sources and routes\n\n"
      "The members of each object in `sources` and of `routes`, checked by the same validator as the keys above. "
      "A value that is not accepted is an error naming its path (`sources[1].maxTokens: 0 is not accepted "
      "(expected an integer from 1 to 4096)`, `sources[0].colour: unknown member of a local source (known: ...)`, "
      "`routes.automatic: no source is named \"gpu\"`); the routing in force is kept and the other settings "
      "apply.\n\n#### Every source\n\n";
  out += schema::render_members_markdown(routing::source_schema());
  out += "\n#### `quota`\n\n";
  out += schema::render_members_markdown(routing::quota_schema());
  // Each kind's own members; kinds that share a schema share a table.
  const routing::source_registry& kinds = routing::builtin_kinds();
  std::vector<const schema::object_schema*> done;
  for (const std::string& name : kinds.names()) {
    const schema::object_schema* members = kinds.find(name)->members;
    if (!members || std::find(done.begin(), done.end(), members) != done.end()) continue;
    done.push_back(members);
    std::string names;
    for (const std::string& other : kinds.names())
      if (kinds.find(other)->members == members) names += std::string(names.empty() ? "" : ", ") + "`" + other + "`";
    out += std::string("\n#### Kind") + (names.find(',') != std::string::npos ? "s " : " ") + names + "\n\n";
    out += schema::render_members_markdown(*members);
  }
  out += "\n#### `routes`\n\n";
  out += schema::render_members_markdown(routing::routes_schema());
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
    using schema::markdown_cell;
    out += "| `" + markdown_cell(s.key) + "` | " + s.type_name() + " | `" + markdown_cell(s.default_json()) + "` | " +
           markdown_cell(s.accepted(true)) + " | " + markdown_cell(doc) + " |\n";
  }
  out += render_structured_markdown();
  out += "\n";
  out += settings_doc_end;
  out += "\n";
  return out;
}

}  // namespace qf::server
