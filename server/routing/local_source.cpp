// The "local" source kind (see local_source.h).
#include "server/routing/local_source.h"

#include <boost/json.hpp>

#include "server/routing/memory_fit.h"

namespace qf::server::routing {

namespace json = boost::json;

std::optional<local_options> parse_local_source(const json::object& o, std::string* error) {
  local_options out;
  for (const auto& [k, v] : o) {
    if (k == "name" || k == "kind" || k == "quota") continue;
    if (k == "model") {
      if (!v.is_string()) {
        *error = "model: expected a GGUF path or a pulled model's name";
        return std::nullopt;
      }
      out.model = std::string(v.get_string());
    } else if (k == "device") {
      if (!v.is_string() || (v.get_string() != "auto" && v.get_string() != "cpu" && v.get_string() != "cuda")) {
        *error = "device: expected one of \"auto\", \"cpu\", \"cuda\"";
        return std::nullopt;
      }
      out.device = std::string(v.get_string());
    } else if (k == "threads") {
      if (!v.is_int64() || v.get_int64() < 0 || v.get_int64() > 256) {
        *error = "threads: expected an integer from 0 to 256";
        return std::nullopt;
      }
      out.threads = static_cast<int>(v.get_int64());
    } else {
      *error = "unknown member \"" + std::string(k) + "\" of a local source (model, device, threads)";
      return std::nullopt;
    }
  }
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
  k.parse = [](const json::object& o, std::string* e) -> std::optional<std::any> {
    auto v = parse_local_source(o, e);
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
