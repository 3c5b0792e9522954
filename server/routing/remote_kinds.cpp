// The remote source kinds (see remote_kinds.h).
#include "server/routing/remote_kinds.h"

#include "server/remote/remote_source.h"

namespace qf::server::routing {

void register_remote_kinds(source_registry& r) {
  for (const char* name : {"openai", "llama-infill"}) {
    source_kind k;
    k.local = false;
    k.members = &remote::remote_source_schema();
    k.parse = [](const boost::json::object& o, const std::string& path, std::string* e) -> std::optional<std::any> {
      std::optional<remote::remote_options> v = remote::parse_remote_source(o, e, path);
      if (!v) return std::nullopt;
      return std::any(std::move(*v));
    };
    k.make = [](const std::any& a, const make_context& ctx, std::string* e) {
      std::unique_ptr<completion_provider> p =
          remote::make_remote_source(std::any_cast<const remote::remote_options&>(a), e);
      if (p) p->configure(ctx.base.completion);
      return p;
    };
    r.add(name, std::move(k));
  }
}

}  // namespace qf::server::routing
