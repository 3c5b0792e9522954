// The "quickfill" settings: one schema, one parser, one set of rules.
//
// settings_schema() lists every key of the settings object with its type,
// default, accepted values and a one-line doc; parse_settings() is driven by
// that list alone, and docs/configuration.md is rendered from it
// (`quickfill settings --markdown`; a test fails when the file and the schema
// disagree). The defaults are the initializers of the typed sections below,
// so a default is written exactly once.
//
// Rules (docs/configuration.md says the same for users):
// * A settings object is complete: a key it does not carry, or carries as
//   null, takes its default. Each initializationOptions and each
//   workspace/didChangeConfiguration payload that carries quickfill settings
//   (has_settings) replaces the whole settings; a removed key goes back to the
//   user config file's value or its default (the model path too).
// * Privileged keys (setting_trust; docs/security.md) come from the user
//   config file only (parse_layered_settings).
// * A bad value (wrong type, out of range, not one of the allowed strings)
//   takes the default, with a warning naming the key, the value and what is
//   accepted. Unknown keys are ignored with a warning.
// * A payload whose "quickfill" member is not an object cannot be read at all:
//   that is an error and the settings stay as they were.
// Keys may be nested ({"completion": {"maxTokens": 24}}) or flat
// ({"completion.maxTokens": 24}); when both are given the nested one wins.
//
// The result is split into typed sections, one per layer: the server's own
// (deadlines, context documents), the completion pipeline's and the engine's
// (device; threads and step graphs come from the command line and the
// environment, not from the settings object).
#pragma once

#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include <boost/json/value.hpp>

#include "server/completion/decode/engine_backend.h"
#include "server/completion/api/setting_schema.h"
#include "server/completion/api/settings.h"
#include "server/core/privacy_filter.h"
#include "server/routing/routing_settings.h"

namespace qf::server {

// The server's own section, the daemon's options included.
struct server_settings {
  std::string model;                // GGUF path ("" = not set)
  int auto_deadline_ms = 400;       // budget of automatic triggers
  int explicit_deadline_ms = 2000;  // budget of requests the user invoked
  int context_documents = 8;        // other open documents passed as context
  bool workspace_index = true;      // index the workspace's definitions in the background
  int slo_budget_ms = 500;          // latency SLO: reply time of an automatic completion
  double slo_target = 0.95;         // latency SLO: share of automatic answers within the budget
  // The per-user daemon (docs/daemon.md). Read by `quickfill --stdio` from
  // initializationOptions only, before it connects; later payloads do not
  // switch the mode of a running session.
  bool daemon_enabled = true;       // false: the model is loaded in this process, as with --no-daemon
  int daemon_idle_timeout_s = 300;  // a daemon started by this editor exits this long after its last client
  std::string daemon_http;          // "HOST:PORT": a daemon started by this editor also serves HTTP (server/http/)
};

// Who may set a key (docs/security.md). The user config file
// (user_config.h) may set every key; the editor's payloads may set `any` keys,
// `bare_name` keys only to a bare name (a model in the models folder, never a
// path), add to `additive` arrays, and never set `user_file` keys.
enum class setting_trust { any, user_file, bare_name, additive };

struct quickfill_settings {
  server_settings server;
  completion::completion_settings completion;
  completion::engine_options engine;
  routing::routing_settings routing;  // sources, routes, audit log (server/routing/)
  privacy_settings privacy;           // documents kept out of prompts (privacy_filter.h)
};

// One key of the schema.
struct setting_spec {
  using bool_field = bool* (*)(quickfill_settings&);
  using int_field = int* (*)(quickfill_settings&);
  using number_field = double* (*)(quickfill_settings&);
  using string_field = std::string* (*)(quickfill_settings&);
  // A structured value (an array or an object) read as a whole by its owner's
  // parser after the scalar keys: "sources" and "routes" (routing_settings.h).
  using json_field = boost::json::value* (*)(quickfill_settings&);
  // An array of strings ("privacy.exclude"); duplicates are dropped.
  using string_list_field = std::vector<std::string>* (*)(quickfill_settings&);

  std::string_view key;    // dotted path, e.g. "completion.maxTokens"
  std::string_view group;  // documentation table it belongs to
  std::variant<bool_field, int_field, number_field, string_field, json_field, string_list_field> field;
  double min = 0, max = 0;                // integers and numbers: accepted range
  std::vector<std::string_view> choices;  // strings: allowed values (empty: any string)
  std::string_view doc;                   // one line: meaning, and why the default
  setting_trust trust = setting_trust::any;  // who may set it (docs/security.md)

  std::string type_name() const;        // "boolean", "integer", "number", "string", "array", "object"
  // What is accepted: for messages ("an integer from 1 to 4096", "one of \"auto\", \"cpu\"") or
  // for the docs ("1 to 4096", "`auto`, `cpu`").
  std::string accepted(bool markdown) const;
  std::string default_json() const;     // the default as JSON text ("32", "\"auto\"", "true")
  // The key as the settings validator sees it (completion/api/setting_schema.h).
  schema::member_schema member() const;
};

const std::vector<setting_spec>& settings_schema();

struct settings_problem {
  enum class severity { warning, error };
  severity level = severity::warning;
  std::string message;
};

struct parsed_settings {
  quickfill_settings values;
  std::vector<settings_problem> problems;
  bool usable = true;  // false: the payload could not be read; keep the settings as they were
};

// Reads a settings payload: {"quickfill": {...}} or the bare quickfill object.
// has_settings() is false when the payload carries no quickfill settings at
// all, which changes nothing: null (a client that expects to be asked), or an
// object with neither a "quickfill" member nor any of its keys (`{}`, as eglot
// sends on connecting, or only other servers' sections). {"quickfill": {}}
// means all defaults.
bool has_settings(const boost::json::value& payload);
parsed_settings parse_settings(const boost::json::value& payload);

// The settings of two layers (docs/security.md): `user`, the user config
// file's payload (null: none), gives the base values; `editor`, the editor's
// payload (null: none), overrides the keys it may set. A privileged key the
// editor sends with a value other than null or the default is not used and
// its key is appended to *refused (a `bare_name` key only when the value is a
// path). Problems of the user layer name the file ("user config file: ...");
// an unreadable user layer is an error and none of its values are used; an
// unreadable editor payload makes the result not usable, as parse_settings.
parsed_settings parse_layered_settings(const boost::json::value& user, const boost::json::value& editor,
                                       std::vector<std::string>* refused);

// A model name the editor may give: not empty, no '/' or '\\', not starting
// with '.', no '~' (so it can only name a file in the models folder).
bool is_bare_model_name(std::string_view name);

// The markdown of docs/configuration.md between the markers below, rendered
// from the schema (markers included).
inline constexpr std::string_view settings_doc_begin =
    "<!-- settings reference: generated by `quickfill settings --markdown`, do not edit by hand -->";
inline constexpr std::string_view settings_doc_end = "<!-- end of settings reference -->";
std::string render_settings_markdown();

// QUICKFILL_STEP_GRAPHS=0 in the environment turns off replayed CUDA step
// graphs; read once where a process starts (the server, the CLI tools).
bool step_graphs_from_environment();

}  // namespace qf::server
