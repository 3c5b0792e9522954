// The kinds of completion sources: a kind's name -> a validator of the
// source's JSON object and a maker of its provider.
//
// builtin_kinds() is the registry the settings parser and the router use; it
// holds "local" (local_source.h) and the remote kinds. Registering a kind is
// one call: add_kind<options>(name, parse, make) for a kind that needs
// nothing but its options, add() for one that needs the make_context (the
// local model factory, the model resolver, the memory headroom). Tests build
// their own registry with extra kinds.
#pragma once

#include <any>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <boost/json/object.hpp>

#include "server/completion/api/completion_provider.h"
#include "server/completion/api/setting_schema.h"
#include "server/completion/pipeline/provider_factory.h"

namespace qf::server::routing {

using local_factory = std::function<std::unique_ptr<completion_provider>(const provider_options&, std::string*)>;

// What a maker may use besides its own options.
struct make_context {
  std::string name;             // the source being made (for messages)
  provider_options base;        // the implicit local source: the chosen model, completion, engine, progress
  local_factory factory;        // makes a local model's provider (the binary's make_completion_provider)
  std::function<std::string(const std::string&)> resolve_model;  // a name or path -> a path ("" unknown)
  std::uint64_t memory_reserve_bytes = 0;  // left free when a further local model is loaded
  int resident_local_models = 0;           // local models this router holds already
};

struct source_kind {
  bool local = false;  // runs on this machine: no audit line, memory checked
  // The kind's members besides name, kind and quota (the settings reference
  // documents them; nullptr: not documented, e.g. the tests' kinds).
  const schema::object_schema* members = nullptr;
  // Validates the whole source object (name, kind and quota are the router's;
  // a kind accepts and ignores them). `path` names the object in messages
  // ("sources[1]"). nullopt with *error when not accepted.
  std::function<std::optional<std::any>(const boost::json::object&, const std::string& path, std::string*)> parse;
  // Makes the provider from what parse returned; nullptr with *error.
  std::function<std::unique_ptr<completion_provider>(const std::any&, const make_context&, std::string*)> make;
};

class source_registry {
 public:
  void add(std::string name, source_kind kind);

  // A kind made from its options alone (a remote endpoint).
  template <class Options>
  void add_kind(std::string name,
                std::optional<Options> (*parse)(const boost::json::object&, std::string*),
                std::unique_ptr<completion_provider> (*make)(const Options&, std::string*)) {
    source_kind k;
    k.parse = [parse](const boost::json::object& o, const std::string& path,
                      std::string* e) -> std::optional<std::any> {
      std::optional<Options> v = parse(o, e);
      if (!v && e) *e = path + ": " + *e;
      if (!v) return std::nullopt;
      return std::any(std::move(*v));
    };
    k.make = [make](const std::any& a, const make_context&, std::string* e) {
      return make(std::any_cast<const Options&>(a), e);
    };
    add(std::move(name), std::move(k));
  }

  const source_kind* find(std::string_view name) const;
  std::vector<std::string> names() const;
  std::string names_text() const;  // "\"local\", \"openai\"" for messages

 private:
  std::vector<std::pair<std::string, source_kind>> kinds_;
};

// "local" and the remote kinds.
const source_registry& builtin_kinds();

}  // namespace qf::server::routing
