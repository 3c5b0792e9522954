// The "local" source kind: a GGUF model run by this process's engine and
// pipeline (the provider the server has always had).
//
// Members (local_source_schema(), validated by the settings validator):
// `model` (a GGUF path or the name of a pulled model; absent: the model the
// settings choose, i.e. the implicit source's), `device` (auto, cpu, cuda;
// absent: the engine settings'), `threads` (0..256; absent: --threads).
// A local model made while this router already holds one is loaded only when
// memory_fit.h says it fits.
#pragma once

#include <optional>
#include <string>

#include <boost/json/object.hpp>

#include "server/routing/source_registry.h"

namespace qf::server::routing {

struct local_options {
  std::string model;                 // "" : the implicit source's model
  std::optional<std::string> device;
  std::optional<int> threads;
};

const schema::object_schema& local_source_schema();
// `path` names the source in messages ("sources[1]").
std::optional<local_options> parse_local_source(const boost::json::object& o, const std::string& path,
                                                std::string* error);
std::unique_ptr<completion_provider> make_local_source(const local_options& o, const make_context& ctx,
                                                       std::string* error);

// Registers "local" in `r`.
void register_local_kind(source_registry& r);

}  // namespace qf::server::routing
