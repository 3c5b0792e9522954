// JSON -> completion_settings. Keys are the camelCase names documented in
// docs/configuration.md; each is looked up in the nested "completion" object
// first, then as a flat "completion.<key>" member.
#include "server/completion/settings.h"

#include <boost/json.hpp>

#include <algorithm>

namespace qf::server::completion {
namespace {
namespace json = boost::json;

struct reader {
  const json::object* nested = nullptr;
  const json::object* flat = nullptr;
  std::vector<std::string>* warnings = nullptr;

  const json::value* find(const char* key) const {
    if (nested) {
      if (auto it = nested->find(key); it != nested->end()) return &it->value();
    }
    if (flat) {
      std::string k = std::string("completion.") + key;
      if (auto it = flat->find(k); it != flat->end()) return &it->value();
    }
    return nullptr;
  }
  void warn(const char* key, const char* want) const {
    if (warnings) warnings->push_back(std::string("completion.") + key + ": expected " + want + ", keeping the default");
  }
  void get(const char* key, int& out, int lo, int hi) const {
    const json::value* v = find(key);
    if (!v) return;
    if (v->is_int64() || v->is_uint64() || v->is_double()) {
      double d = v->is_double() ? v->as_double() : v->is_int64() ? double(v->as_int64()) : double(v->as_uint64());
      if (d < lo || d > hi) { warn(key, ("a number in [" + std::to_string(lo) + ", " + std::to_string(hi) + "]").c_str()); return; }
      out = static_cast<int>(d);
    } else {
      warn(key, "a number");
    }
  }
  void get(const char* key, double& out, double lo, double hi) const {
    const json::value* v = find(key);
    if (!v) return;
    if (v->is_number()) {
      double d = v->to_number<double>();
      if (d < lo || d > hi) { warn(key, "a number in range"); return; }
      out = d;
    } else {
      warn(key, "a number");
    }
  }
  void get(const char* key, bool& out) const {
    const json::value* v = find(key);
    if (!v) return;
    if (v->is_bool()) out = v->as_bool();
    else warn(key, "true or false");
  }
};

}  // namespace

completion_settings parse_settings(const std::string& settings_json, std::vector<std::string>* warnings) {
  completion_settings s;
  if (settings_json.empty()) return s;
  boost::system::error_code ec;
  json::value root = json::parse(settings_json, ec);
  if (ec || !root.is_object()) {
    if (warnings) warnings->push_back("settings are not a JSON object; using defaults");
    return s;
  }
  const json::object& obj = root.as_object();
  reader r;
  r.flat = &obj;
  r.warnings = warnings;
  // Tolerate being handed the whole settings payload ({"quickfill": {...}}).
  const json::object* top = &obj;
  if (auto it = obj.find("quickfill"); it != obj.end() && it->value().is_object()) {
    top = &it->value().as_object();
    r.flat = top;
  }
  if (auto it = top->find("completion"); it != top->end() && it->value().is_object()) r.nested = &it->value().as_object();

  if (auto it = top->find("device"); it != top->end()) {
    const json::string* d = it->value().if_string();
    if (d && (*d == "auto" || *d == "cpu" || *d == "cuda")) s.device = std::string(*d);
    else if (warnings) warnings->push_back("device: expected \"auto\", \"cpu\" or \"cuda\", keeping \"auto\"");
  }
  r.get("prefixTokens", s.prefix_tokens, 0, 32768);
  r.get("suffixTokens", s.suffix_tokens, 0, 32768);
  r.get("extraTokens", s.extra_tokens, 0, 32768);
  r.get("middleMaxTokens", s.middle_max_tokens, 8, 4096);
  r.get("rebaseWhenIdle", s.rebase_when_idle);
  r.get("maxTokens", s.max_tokens_auto, 1, 4096);
  r.get("maxTokensExplicit", s.max_tokens_explicit, 1, 4096);
  r.get("multiLine", s.multi_line);
  r.get("stopRules", s.stop_rules);
  r.get("autoTriggerMidWord", s.auto_trigger_mid_word);
  r.get("promptShare", s.prompt_share, 0.05, 1.0);
  r.get("finishLineMs", s.finish_line_ms, 0, 10000);
  r.get("promptChunkTokens", s.prompt_chunk_tokens, 1, 4096);
  r.get("backgroundChunkTokens", s.background_chunk_tokens, 1, 4096);
  r.get("typeThrough", s.type_through);
  r.get("speculative", s.speculative);
  r.get("draftMax", s.draft_max, 1, 64);
  r.get("draftNgram", s.draft_ngram, 1, 16);
  r.get("prefetch", s.prefetch);
  r.get("cacheMiB", s.cache_mib, 1, 1 << 20);
  r.get("cacheSlots", s.cache_slots, 1, 64);
  r.get("contextTokens", s.context_tokens, 256, 1 << 20);
  r.get("reuseShiftedChunks", s.reuse_shifted_chunks);
  r.get("minChunkTokens", s.min_chunk_tokens, 4, 1 << 20);
  return s;
}

void fit_to_context(completion_settings& s, int64_t n_ctx) {
  const int quarter = static_cast<int>(std::max<int64_t>(8, n_ctx / 4));
  s.max_tokens_explicit = std::min(s.max_tokens_explicit, quarter);
  s.max_tokens_auto = std::min(s.max_tokens_auto, s.max_tokens_explicit);
  s.middle_max_tokens = std::min(s.middle_max_tokens, quarter);
  // FIM and separator tokens, the partial line after the middle token.
  constexpr int64_t k_format_overhead = 16;
  const int64_t reserve = s.max_tokens_explicit + s.draft_max + s.middle_max_tokens + k_format_overhead;
  const int64_t room = std::max<int64_t>(0, n_ctx - reserve);
  const int64_t want = int64_t(s.prefix_tokens) + s.suffix_tokens + s.extra_tokens;
  if (want <= room) return;
  const double f = want > 0 ? double(room) / double(want) : 0.0;
  s.prefix_tokens = static_cast<int>(s.prefix_tokens * f);
  s.suffix_tokens = static_cast<int>(s.suffix_tokens * f);
  s.extra_tokens = static_cast<int>(s.extra_tokens * f);
}

}  // namespace qf::server::completion
