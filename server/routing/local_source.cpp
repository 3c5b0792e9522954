// The "local" source kind (see local_source.h).
#include "server/routing/local_source.h"

#include <boost/json.hpp>

#include "server/routing/memory_fit.h"

namespace qf::server::routing {

namespace json = boost::json;

const schema::object_schema& local_source_schema() {
  using M = schema::member_schema;
  using T = schema::value_type;
  static const schema::object_schema s{
      "a local source",
      {
          M{.name = "model", .type = T::string, .default_doc = "`model`'s",
            .doc = "A GGUF path (absolute) or the name of a model pulled with `quickfill model pull`. Absent: the "
                   "model the settings choose (`model`, `--model`, the bundled one)."},
          M{.name = "device", .type = T::string, .default_doc = "`device`'s", .choices = {"auto", "cpu", "cuda"},
            .doc = "Where this source's model runs (as `device`)."},
          M{.name = "threads", .type = T::integer, .default_doc = "`--threads`", .min = 0, .max = 256,
            .doc = "Inference threads of this source's engine (0: picked from the machine)."},
      }};
  return s;
}

std::optional<local_options> parse_local_source(const json::object& o, const std::string& path, std::string* error) {
  auto v = schema::validate_object(local_source_schema(), o, path, error, {"name", "kind", "quota"});
  if (!v) return std::nullopt;
  local_options out;
  out.model = schema::get_string(*v, "model");
  if (v->contains("device")) out.device = schema::get_string(*v, "device");
  if (v->contains("threads")) out.threads = static_cast<int>(schema::get_int(*v, "threads"));
  return out;
}

std::unique_ptr<completion_provider> make_local_source(const local_options& o, const make_context& ctx,
                                                       std::string* error) {
  const std::string& name = ctx.name;
  provider_options po = ctx.base;
  if (!o.model.empty()) {
    po.model_path = ctx.resolve_model ? ctx.resolve_model(o.model) : o.model;
    if (po.model_path.empty()) {  // refused (a relative path, no models folder): never the working directory
      *error = "source \"" + name + "\": model \"" + o.model +
               "\" is neither a model in the models folder nor an absolute path";
      return nullptr;
    }
  }
  if (o.device) po.engine.device = *o.device;
  if (o.threads) po.engine.threads = *o.threads;
  if (po.model_path.empty()) {
    *error = "source \"" + name + "\" has no model (set its \"model\" member or quickfill.model)";
    return nullptr;
  }
  if (ctx.resident_local_models > 0) {
    std::string why;
    std::optional<model_footprint> f = estimate_footprint(po.model_path, po.completion, &why);
    if (!f) {
      *error = "source \"" + name + "\": " + why;
      return nullptr;
    }
    const bool on_gpu = po.engine.device == "cuda" || (po.engine.device == "auto" && gpu_free_memory().has_value());
    fit_verdict v = check_fit(name, *f, mem_available(), on_gpu ? gpu_free_memory() : std::nullopt, on_gpu,
                              ctx.memory_reserve_bytes);
    if (!v.fits) {
      *error = v.message;
      return nullptr;
    }
  }
  if (!ctx.factory) {
    *error = "this build has no completion engine";
    return nullptr;
  }
  return ctx.factory(po, error);
}

void register_local_kind(source_registry& r) {
  source_kind k;
  k.local = true;
  k.members = &local_source_schema();
  k.parse = [](const json::object& o, const std::string& path, std::string* e) -> std::optional<std::any> {
    auto v = parse_local_source(o, path, e);
    if (!v) return std::nullopt;
    return std::any(*v);
  };
  k.make = [](const std::any& a, const make_context& ctx, std::string* e) {
    const auto& o = std::any_cast<const local_options&>(a);
    return make_local_source(o, ctx, e);
  };
  r.add("local", std::move(k));
}

}  // namespace qf::server::routing
