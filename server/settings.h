// The "quickfill" settings object as the server core reads it.
//
// Settings arrive in `initializationOptions` and in
// `workspace/didChangeConfiguration` (either as `settings.quickfill` or as the
// object itself). The server reads only what it needs for scheduling (the
// model path and the per-trigger deadlines); the whole object is passed on, as
// JSON text, to the completion provider, whose settings are documented in
// docs/configuration.md. Keys may be nested ({"completion":{"autoDeadlineMs":..}})
// or flat ("completion.autoDeadlineMs"). Mistyped values keep their defaults and produce a
// warning instead of failing the request.
#pragma once

#include <string>
#include <vector>

#include <boost/json/value.hpp>

namespace qf::server {

struct server_settings {
  std::string model;              // "model": GGUF path ("" = not set)
  int auto_deadline_ms = 400;     // "completion.autoDeadlineMs": automatic triggers
  int explicit_deadline_ms = 2000;  // "completion.explicitDeadlineMs": invoked by the user
  int context_documents = 8;      // "completion.contextDocuments": other open documents to pass
  std::string raw_json = "{}";    // the whole object, for provider->configure()
};

// Picks the quickfill object out of a settings payload (null when there is none).
boost::json::value select_settings_object(const boost::json::value& payload);

// Reads `obj` (the quickfill object) on top of `base`; problems go to *warnings.
server_settings parse_settings(const boost::json::value& obj, const server_settings& base,
                               std::vector<std::string>* warnings);

}  // namespace qf::server
