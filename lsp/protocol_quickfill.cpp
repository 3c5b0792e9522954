// Conversions of the server's own custom messages (see the header).
#include "lsp/protocol_quickfill.h"

namespace qf::lsp {

stats_params tag_invoke(json::value_to_tag<stats_params>, const json::value& v) {
  const json::object& o = expect_object(v);
  stats_params x{};
  if (const json::value* r = o.if_contains("recent")) {
    if (!r->is_int64() || r->get_int64() < 0) throw decode_error("recent", "expected a non-negative integer");
    x.recent = r->get_int64();
  }
  return x;
}

void tag_invoke(json::value_from_tag, json::value& v, const stats_params& x) {
  json::object o;
  write_field(o, "recent", x.recent);
  v = std::move(o);
}

explain_result tag_invoke(json::value_to_tag<explain_result>, const json::value& v) {
  const json::object& o = expect_object(v);
  explain_result x{};
  read_field(o, "format", x.format);
  read_field(o, "prompt", x.prompt);
  read_field(o, "tokens", x.tokens);
  read_field(o, "parts", x.parts);
  std::optional<json::object> gate;
  read_field(o, "gate", gate);
  if (gate) {
    for (const auto& [trigger, g] : *gate) {
      explain_gate e{std::string(trigger), 0, {}};
      try {
        const json::object& go = expect_object(g);
        read_field(go, "threshold", e.threshold);
        read_field(go, "origin", e.origin);
      } catch (decode_error& err) {
        err.prepend_key(trigger);
        err.prepend_key("gate");
        throw;
      }
      x.gate.push_back(std::move(e));
    }
  }
  std::optional<json::object> load;
  read_field(o, "load", load);
  if (load) {
    for (const auto& [trigger, l] : *load) {
      try {
        x.load.push_back(explain_load{std::string(trigger), json::value_to<explain_load_plan>(l)});
      } catch (decode_error& err) {
        err.prepend_key(trigger);
        err.prepend_key("load");
        throw;
      }
    }
  }
  return x;
}

void tag_invoke(json::value_from_tag, json::value& v, const explain_result& x) {
  json::object o;
  write_field(o, "format", x.format);
  write_field(o, "prompt", x.prompt);
  write_field(o, "tokens", x.tokens);
  write_field(o, "parts", x.parts);
  if (!x.gate.empty()) {
    json::object gate;
    for (const explain_gate& g : x.gate) gate[g.trigger] = json::object{{"threshold", g.threshold}, {"origin", g.origin}};
    o["gate"] = std::move(gate);
  }
  if (!x.load.empty()) {
    json::object load;
    for (const explain_load& l : x.load) load[l.trigger] = json::value_from(l.plan);
    o["load"] = std::move(load);
  }
  v = std::move(o);
}

}  // namespace qf::lsp
