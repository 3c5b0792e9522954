// The registry of source kinds (see source_registry.h). builtin_kinds() is
// the one place that lists the kinds the binary knows.
#include "server/routing/source_registry.h"

#include "server/routing/local_source.h"
#include "server/routing/remote_kinds.h"

namespace qf::server::routing {

void source_registry::add(std::string name, source_kind kind) {
  for (auto& [n, k] : kinds_)
    if (n == name) {
      k = std::move(kind);
      return;
    }
  kinds_.emplace_back(std::move(name), std::move(kind));
}

const source_kind* source_registry::find(std::string_view name) const {
  for (const auto& [n, k] : kinds_)
    if (n == name) return &k;
  return nullptr;
}

std::vector<std::string> source_registry::names() const {
  std::vector<std::string> out;
  for (const auto& [n, k] : kinds_) out.push_back(n);
  return out;
}

std::string source_registry::names_text() const {
  std::string out;
  for (const auto& [n, k] : kinds_) out += (out.empty() ? "\"" : ", \"") + n + "\"";
  return out;
}

const source_registry& builtin_kinds() {
  static const source_registry r = [] {
    source_registry k;
    register_local_kind(k);
    register_remote_kinds(k);
    return k;
  }();
  return r;
}

}  // namespace qf::server::routing
