// The device self-check's verdicts on disk (see the header).
#include "server/completion/decode/device_verdicts.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <ctime>

#include <boost/json.hpp>

#include "indexing/definition_cache.h"
#include "indexing/private_file.h"

namespace qf::server::completion {

namespace json = boost::json;

namespace {

constexpr std::uint64_t k_max_file = 1 << 20;  // a verdict is ~300 bytes
constexpr size_t k_max_verdicts = 64;          // the oldest go first

std::string file_identity(const char* path) {
  struct stat st {};
  if (::stat(path, &st) != 0) return "?";
  return std::to_string(st.st_size) + "@" + std::to_string(st.st_mtim.tv_sec) + "." +
         std::to_string(st.st_mtim.tv_nsec);
}

std::string utc_now() {
  const std::time_t t = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

json::object load(const std::string& file) {
  std::string text, err;
  if (file.empty() || index::read_private_file(file, k_max_file, &text, &err) != index::private_read::ok) return {};
  boost::system::error_code ec;
  json::value v = json::parse(text, ec);
  if (ec || !v.is_object()) return {};
  return std::move(v.as_object());
}

device_verdict from_json(const json::object& o) {
  device_verdict v;
  if (auto* p = o.if_contains("passed"); p && p->is_bool()) v.passed = p->as_bool();
  if (auto* p = o.if_contains("worstNmse"); p && p->is_number()) v.worst_nmse = p->to_number<double>();
  auto str = [&](const char* k, std::string& out) {
    if (auto* p = o.if_contains(k); p && p->is_string()) out = std::string(p->as_string());
  };
  str("failure", v.failure);
  str("device", v.device);
  str("model", v.model);
  str("checkedAt", v.checked_at);
  return v;
}

}  // namespace

std::string device_check_key(const std::string& device, const std::string& model_path) {
  return device + "\n" + file_identity("/proc/self/exe") + "\n" + model_path + "\n" +
         file_identity(model_path.c_str());
}

std::string default_device_verdicts_file() {
  const std::string dir = index::default_cache_dir();
  return dir.empty() ? std::string() : dir + "/device-checks.json";
}

std::optional<device_verdict> find_device_verdict(const std::string& file, const std::string& key) {
  const json::object all = load(file);
  const json::value* v = all.if_contains(key);
  if (!v || !v->is_object()) return std::nullopt;
  return from_json(v->as_object());
}

bool record_device_verdict(const std::string& file, const std::string& key, const device_verdict& v,
                           std::string* error) {
  if (file.empty()) {
    if (error) *error = "no cache folder (set XDG_CACHE_HOME or HOME)";
    return false;
  }
  json::object all = load(file);
  // worstNmse may be infinite (NaN logits): JSON has no such number, so it is capped.
  const double worst = std::isfinite(v.worst_nmse) ? v.worst_nmse : 1e300;
  all[key] = json::object{{"passed", v.passed},   {"failure", v.failure},
                          {"worstNmse", worst},   {"device", v.device},
                          {"model", v.model},     {"checkedAt", v.checked_at.empty() ? utc_now() : v.checked_at}};
  while (all.size() > k_max_verdicts) {
    auto oldest = all.begin();
    for (auto it = all.begin(); it != all.end(); ++it)
      if (it->value().is_object() && oldest->value().is_object() &&
          from_json(it->value().as_object()).checked_at < from_json(oldest->value().as_object()).checked_at)
        oldest = it;
    all.erase(oldest);
  }
  return index::write_private_file(file, json::serialize(all), error);
}

std::vector<std::pair<std::string, device_verdict>> all_device_verdicts(const std::string& file) {
  std::vector<std::pair<std::string, device_verdict>> out;
  for (const auto& [k, v] : load(file))
    if (v.is_object()) out.emplace_back(std::string(k), from_json(v.as_object()));
  std::stable_sort(out.begin(), out.end(),
                   [](const auto& a, const auto& b) { return a.second.checked_at > b.second.checked_at; });
  return out;
}

}  // namespace qf::server::completion
