// The per-model confidence gate file (see the header).
#include "server/completion/postprocess/gate_file.h"

#include <filesystem>

#include <boost/json.hpp>

#include "indexing/private_file.h"

namespace qf::server::completion {

std::string gate_file_path(const std::string& model_path) { return model_path + ".gate.json"; }

std::optional<calibrated_gate> read_gate_file(const std::string& model_path, std::string* why) {
  if (why) why->clear();
  const std::string path = gate_file_path(model_path);
  std::string text, error;
  const index::private_read r = index::read_private_file(path, 64 * 1024, &text, &error);
  if (r == index::private_read::missing) return std::nullopt;
  if (r != index::private_read::ok) {
    if (why) *why = error.empty() ? path + " cannot be read" : error;
    return std::nullopt;
  }
  boost::system::error_code ec;
  const boost::json::value v = boost::json::parse(text, ec);
  const boost::json::object* o = !ec && v.is_object() ? &v.get_object() : nullptr;
  const boost::json::value* t = o ? o->if_contains("minConfidence") : nullptr;
  if (!t || !t->is_number() || t->to_number<double>() < -100 || t->to_number<double>() > 0) {
    if (why) *why = path + " holds no minConfidence from -100 to 0";
    return std::nullopt;
  }
  if (const boost::json::value* b = o->if_contains("modelBytes"); b && b->is_number()) {
    std::error_code fec;
    const auto size = std::filesystem::file_size(model_path, fec);
    if (!fec && static_cast<double>(size) != b->to_number<double>()) {
      if (why) *why = path + " was calibrated for another file (" + std::to_string(static_cast<long long>(b->to_number<double>())) +
                      " bytes, the model has " + std::to_string(size) + ")";
      return std::nullopt;
    }
  }
  return calibrated_gate{t->to_number<double>(), path};
}

bool write_gate_file(const std::string& model_path, const std::string& json_text, std::string* error) {
  return index::write_private_file(gate_file_path(model_path), json_text, error);
}

gate_choice resolve_gate(const completion_settings& s, bool explicit_trigger,
                         const std::optional<calibrated_gate>& calibrated) {
  const sampling_settings& cls = explicit_trigger ? s.sampling_explicit : s.sampling_auto;
  if (cls.min_confidence_given) return {cls.min_confidence, "setting"};
  if (!explicit_trigger && calibrated) return {calibrated->threshold, "calibrated " + calibrated->path};
  return {cls.min_confidence, "default"};
}

}  // namespace qf::server::completion
