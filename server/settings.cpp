// Reading the quickfill settings object (see settings.h).
#include "server/settings.h"

#include <boost/json.hpp>

namespace qf::server {

namespace json = boost::json;

json::value select_settings_object(const json::value& payload) {
  if (!payload.is_object()) return nullptr;
  const json::object& o = payload.get_object();
  if (const json::value* q = o.if_contains("quickfill")) return q->is_object() ? *q : json::value(nullptr);
  return payload;
}

namespace {

void read_int(const json::object& o, const char* key, const char* path, int lo, int hi, int& out,
              std::vector<std::string>* warnings) {
  const json::value* v = o.if_contains(key);
  if (!v) return;
  if (v->is_int64() && v->get_int64() >= lo && v->get_int64() <= hi) {
    out = static_cast<int>(v->get_int64());
  } else if (warnings) {
    warnings->push_back(std::string(path) + ": expected an integer in [" + std::to_string(lo) + ", " +
                        std::to_string(hi) + "], keeping " + std::to_string(out));
  }
}

}  // namespace

server_settings parse_settings(const json::value& obj, const server_settings& base,
                               std::vector<std::string>* warnings) {
  server_settings s = base;
  if (!obj.is_object()) return s;
  const json::object& o = obj.get_object();
  s.raw_json = json::serialize(obj);
  if (const json::value* m = o.if_contains("model")) {
    if (m->is_string())
      s.model = std::string(m->get_string());
    else if (!m->is_null() && warnings)
      warnings->push_back("model: expected a string path");
  }
  // Flat keys ("completion.autoDeadlineMs") as some editors send them.
  read_int(o, "completion.autoDeadlineMs", "completion.autoDeadlineMs", 1, 600000, s.auto_deadline_ms, warnings);
  read_int(o, "completion.explicitDeadlineMs", "completion.explicitDeadlineMs", 1, 600000, s.explicit_deadline_ms,
           warnings);
  read_int(o, "completion.contextDocuments", "completion.contextDocuments", 0, 64, s.context_documents, warnings);
  if (const json::value* c = o.if_contains("completion")) {
    if (c->is_object()) {
      const json::object& co = c->get_object();
      read_int(co, "autoDeadlineMs", "completion.autoDeadlineMs", 1, 600000, s.auto_deadline_ms, warnings);
      read_int(co, "explicitDeadlineMs", "completion.explicitDeadlineMs", 1, 600000, s.explicit_deadline_ms,
               warnings);
      read_int(co, "contextDocuments", "completion.contextDocuments", 0, 64, s.context_documents, warnings);
    } else if (warnings) {
      warnings->push_back("completion: expected an object");
    }
  }
  return s;
}

}  // namespace qf::server
