// Bodies of /infill and /v1/completions (see fim_api.h).
#include "server/http/fim_api.h"

#include <algorithm>
#include <cmath>
#include <set>

#include <boost/json.hpp>

namespace qf::http {

namespace json = boost::json;

namespace {

// Fields read and ignored: llama-server's sampling and slot options and
// OpenAI's, which a greedy engine has no use for.
const std::set<std::string, std::less<>> ignored_infill = {
    "temperature", "top_k", "top_p", "min_p", "typical_p", "samplers", "cache_prompt", "seed", "repeat_penalty",
    "repeat_last_n", "presence_penalty", "frequency_penalty", "dynatemp_range", "dynatemp_exponent", "mirostat",
    "mirostat_tau", "mirostat_eta", "n_probs", "min_keep", "ignore_eos", "n_keep", "n_discard", "logit_bias",
    "xtc_probability", "xtc_threshold", "dry_multiplier", "dry_base", "dry_allowed_length", "dry_penalty_last_n",
    "dry_sequence_breakers", "top_n_sigma", "n_cmpl", "return_tokens", "post_sampling_probs", "timings_per_token",
    "lora", "grammar", "json_schema", "penalize_nl", "n_probs", "stream_options"};
const std::set<std::string, std::less<>> ignored_openai = {
    "temperature", "top_p", "n", "logprobs", "echo", "presence_penalty", "frequency_penalty", "best_of",
    "logit_bias", "user", "seed", "top_k", "min_p", "cache_prompt", "samplers", "id_slot", "n_indent"};

// A field's name in quotes (built by appending: GCC 12 warns, falsely, about
// `"literal" + std::string` here, -Wrestrict).
std::string field(std::string_view k) {
  std::string s(1, '"');
  s.append(k);
  s += '"';
  return s;
}

class reader {
 public:
  reader(const json::object& o, std::string* error) : o_(o), error_(error) {}

  bool fail(const std::string& m) {
    if (error_ && error_->empty()) *error_ = m;
    return false;
  }
  const json::value* get(std::string_view k) const {
    const auto* v = o_.if_contains(k);
    return v && !v->is_null() ? v : nullptr;
  }
  bool string(std::string_view k, std::string& out) {
    const auto* v = get(k);
    if (!v) return true;
    if (!v->is_string()) return fail(field(k) + " must be a string");
    out = std::string(v->as_string());
    return true;
  }
  bool integer(std::string_view k, int lo, int hi, int& out) {
    const auto* v = get(k);
    if (!v) return true;
    double d = 0;
    if (v->is_int64()) d = static_cast<double>(v->as_int64());
    else if (v->is_uint64()) d = static_cast<double>(v->as_uint64());
    else if (v->is_double() && std::floor(v->as_double()) == v->as_double()) d = v->as_double();
    else return fail(field(k) + " must be an integer");
    if (d < lo || d > hi)
      return fail(field(k) + " must be between " + std::to_string(lo) + " and " + std::to_string(hi));
    out = static_cast<int>(d);
    return true;
  }
  bool number(std::string_view k, double lo, double hi, double& out) {
    const auto* v = get(k);
    if (!v) return true;
    if (!v->is_number()) return fail(field(k) + " must be a number");
    const double d = v->to_number<double>();
    if (!(d >= lo && d <= hi)) return fail(field(k) + " is out of range");
    out = d;
    return true;
  }
  bool boolean(std::string_view k, bool& out) {
    const auto* v = get(k);
    if (!v) return true;
    if (!v->is_bool()) return fail(field(k) + " must be true or false");
    out = v->as_bool();
    return true;
  }
  // A string or an array of strings (at most `max`).
  bool strings(std::string_view k, std::size_t max, std::vector<std::string>& out) {
    const auto* v = get(k);
    if (!v) return true;
    if (v->is_string()) {
      out = {std::string(v->as_string())};
      return true;
    }
    if (!v->is_array()) return fail(field(k) + " must be a string or an array of strings");
    if (v->as_array().size() > max)
      return fail(field(k) + " has more than " + std::to_string(max) + " entries");
    out.clear();
    for (const auto& e : v->as_array()) {
      if (!e.is_string()) return fail(field(k) + " must hold strings only");
      out.emplace_back(e.as_string());
    }
    return true;
  }
  bool only_known(const std::set<std::string, std::less<>>& read, const std::set<std::string, std::less<>>& ignored) {
    for (const auto& [k, v] : o_) {
      if (read.count(std::string_view(k)) || ignored.count(std::string_view(k))) continue;
      std::string known;
      for (const auto& r : read) known += (known.empty() ? "" : ", ") + r;
      return fail(std::string("unknown field ").append(field(k)).append(" (this server reads ").append(known) +
                  " and accepts llama-server's and OpenAI's sampling options)");
    }
    return true;
  }

 private:
  const json::object& o_;
  std::string* error_;
};

std::optional<json::object> parse_object(std::string_view body, std::string* error) {
  boost::system::error_code ec;
  json::value v = json::parse(body, ec);
  if (ec) {
    if (error) *error = "the body is not valid JSON: " + ec.message();
    return std::nullopt;
  }
  if (!v.is_object()) {
    if (error) *error = "the body must be a JSON object";
    return std::nullopt;
  }
  return std::move(v.as_object());
}

constexpr int max_predict = 4096;
constexpr double max_ms = 600000;

json::object timings_json(const fim_answer& a) {
  auto per = [](double ms, long long n) { return n > 0 ? ms / static_cast<double>(n) : 0.0; };
  auto rate = [](double ms, long long n) { return ms > 0 ? 1000.0 * static_cast<double>(n) / ms : 0.0; };
  return json::object{{"prompt_n", a.prompt_n},
                      {"prompt_ms", a.prompt_ms},
                      {"prompt_per_token_ms", per(a.prompt_ms, a.prompt_n)},
                      {"prompt_per_second", rate(a.prompt_ms, a.prompt_n)},
                      {"predicted_n", a.predicted_n},
                      {"predicted_ms", a.predicted_ms},
                      {"predicted_per_token_ms", per(a.predicted_ms, a.predicted_n)},
                      {"predicted_per_second", rate(a.predicted_ms, a.predicted_n)},
                      {"cache_n", a.cached_n}};
}

// llama-server's response_fields: each path ("a/b") that exists becomes a
// top-level key of that name.
json::object select_fields(const json::object& full, const std::vector<std::string>& paths) {
  json::object out;
  for (const std::string& path : paths) {
    const json::value* cur = nullptr;
    const json::object* obj = &full;
    std::size_t from = 0;
    while (obj) {
      const std::size_t slash = path.find('/', from);
      const std::string_view part = std::string_view(path).substr(from, slash == std::string::npos ? path.npos : slash - from);
      cur = obj->if_contains(part);
      if (!cur || slash == std::string::npos) break;
      obj = cur->is_object() ? &cur->as_object() : nullptr;
      if (!obj) cur = nullptr;
      from = slash + 1;
    }
    if (cur) out[path] = *cur;
  }
  return out;
}

std::string finish_reason(const fim_answer& a) { return a.stop_type == "limit" ? "length" : "stop"; }

}  // namespace

std::optional<fim_request> parse_infill(std::string_view body, std::string* error) {
  auto obj = parse_object(body, error);
  if (!obj) return std::nullopt;
  reader r(*obj, error);
  fim_request q;
  static const std::set<std::string, std::less<>> read = {
      "input_prefix", "input_suffix", "input_extra", "prompt", "id_slot", "n_predict", "n_indent", "stop", "stream",
      "t_max_prompt_ms", "t_max_predict_ms", "response_fields", "model"};
  if (!r.only_known(read, ignored_infill)) return std::nullopt;
  std::vector<std::string> fields;
  bool ok = r.string("input_prefix", q.prefix) && r.string("input_suffix", q.suffix) && r.string("prompt", q.middle) &&
            r.integer("id_slot", -1, 1 << 20, q.id_slot) && r.integer("n_predict", -1, max_predict, q.n_predict) &&
            r.integer("n_indent", 0, 1 << 20, q.n_indent) && r.strings("stop", 16, q.stop) &&
            r.boolean("stream", q.stream) && r.number("t_max_prompt_ms", 0, max_ms, q.t_max_prompt_ms) &&
            r.number("t_max_predict_ms", 0, max_ms, q.t_max_predict_ms) && r.string("model", q.model);
  if (ok && r.get("response_fields")) {
    ok = r.strings("response_fields", 64, fields);
    q.response_fields = fields;
  }
  if (ok) {
    if (const auto* e = r.get("input_extra")) {
      if (!e->is_array()) return r.fail("\"input_extra\" must be an array of {\"filename\", \"text\"} objects"), std::nullopt;
      for (std::size_t i = 0; i < e->as_array().size(); ++i) {
        const json::value& c = e->as_array()[i];
        const std::string at = std::string("\"input_extra\"[").append(std::to_string(i)).append("]");
        if (!c.is_object()) return r.fail(at + " must be an object"), std::nullopt;
        fim_chunk chunk;
        for (const auto& [k, v] : c.as_object()) {
          if (k == "time") continue;  // llama.vim's ring chunks carry when they were picked
          if (k != "filename" && k != "text") return r.fail(at + " has an unknown field " + field(k)), std::nullopt;
          if (!v.is_string()) return r.fail(at + "." + std::string(k) + " must be a string"), std::nullopt;
          (k == "filename" ? chunk.filename : chunk.text) = std::string(v.as_string());
        }
        q.extra.push_back(std::move(chunk));
      }
    }
  }
  if (!ok) return std::nullopt;
  return q;
}

std::optional<fim_request> parse_openai_completion(std::string_view body, std::string* error) {
  auto obj = parse_object(body, error);
  if (!obj) return std::nullopt;
  reader r(*obj, error);
  fim_request q;
  q.openai = true;
  static const std::set<std::string, std::less<>> read = {"prompt", "suffix", "max_tokens", "stop", "stream",
                                                          "stream_options", "model"};
  if (!r.only_known(read, ignored_openai)) return std::nullopt;
  std::vector<std::string> prompt;
  bool ok = r.strings("prompt", 1, prompt) && r.string("suffix", q.suffix) &&
            r.integer("max_tokens", -1, max_predict, q.n_predict) && r.strings("stop", 16, q.stop) &&
            r.boolean("stream", q.stream) && r.string("model", q.model);
  if (!ok) return std::nullopt;
  if (!prompt.empty()) q.prefix = prompt.front();
  if (const auto* n = r.get("n"); n && !(n->is_number() && n->to_number<double>() == 1))
    return r.fail("\"n\" must be 1 (one completion per request)"), std::nullopt;
  if (const auto* so = r.get("stream_options")) {
    if (!so->is_object()) return r.fail("\"stream_options\" must be an object"), std::nullopt;
    if (const auto* iu = so->as_object().if_contains("include_usage"); iu && iu->is_bool()) q.include_usage = iu->as_bool();
  }
  return q;
}

void apply_stops(const fim_request& req, fim_answer& a) {
  std::size_t cut = std::string::npos;
  for (const std::string& s : req.stop) {
    if (s.empty()) continue;
    const std::size_t at = a.content.find(s);
    if (at != std::string::npos && at < cut) {
      cut = at;
      a.stopping_word = s;
    }
  }
  if (cut != std::string::npos) {
    a.content.resize(cut);
    a.stop_type = "word";
  }
  if (req.n_indent <= 0) return;
  // Lines after the first: one indented less than n_indent (and not empty) ends it.
  std::size_t line = a.content.find('\n');
  while (line != std::string::npos) {
    const std::size_t start = line + 1;
    std::size_t indent = 0;
    while (start + indent < a.content.size() && (a.content[start + indent] == ' ' || a.content[start + indent] == '\t'))
      ++indent;
    const bool blank = start + indent >= a.content.size() || a.content[start + indent] == '\n' ||
                       a.content[start + indent] == '\r';
    if (!blank && static_cast<int>(indent) < req.n_indent) {
      a.content.resize(line);
      a.stop_type = "eos";
      return;
    }
    line = a.content.find('\n', start);
  }
}

json::object infill_answer_json(const fim_request& req, const fim_answer& a) {
  json::object full{{"index", 0},
                    {"content", a.content},
                    {"tokens", json::array{}},
                    {"id_slot", a.id_slot},
                    {"stop", true},
                    {"model", a.model},
                    {"tokens_predicted", a.predicted_n},
                    {"tokens_evaluated", a.prompt_n},
                    {"has_new_line", a.content.find('\n') != std::string::npos},
                    {"truncated", a.truncated},
                    {"stop_type", a.stop_type},
                    {"stopping_word", a.stopping_word},
                    {"tokens_cached", a.cached_n + a.prompt_n + a.predicted_n},
                    {"timings", timings_json(a)}};
  if (req.response_fields) return select_fields(full, *req.response_fields);
  return full;
}

std::vector<json::object> infill_stream_events(const fim_request& req, const fim_answer& a) {
  std::vector<json::object> out;
  if (!a.content.empty())
    out.push_back(json::object{{"index", 0}, {"content", a.content}, {"tokens", json::array{}}, {"stop", false},
                               {"id_slot", a.id_slot}, {"tokens_predicted", a.predicted_n},
                               {"tokens_evaluated", a.prompt_n}});
  fim_answer last = a;
  last.content.clear();
  json::object end = infill_answer_json(fim_request{}, last);
  if (req.response_fields) end = select_fields(end, *req.response_fields);
  out.push_back(std::move(end));
  return out;
}

json::object openai_answer_json(const fim_request& req, const fim_answer& a, const std::string& id, long long created) {
  (void)req;
  return json::object{
      {"id", id},
      {"object", "text_completion"},
      {"created", created},
      {"model", a.model},
      {"choices", json::array{json::object{{"text", a.content}, {"index", 0}, {"logprobs", nullptr},
                                           {"finish_reason", finish_reason(a)}}}},
      {"usage", json::object{{"prompt_tokens", a.prompt_n + a.cached_n},
                             {"completion_tokens", a.predicted_n},
                             {"total_tokens", a.prompt_n + a.cached_n + a.predicted_n}}},
      {"timings", timings_json(a)}};
}

std::vector<json::object> openai_stream_events(const fim_request& req, const fim_answer& a, const std::string& id,
                                               long long created) {
  auto event = [&](const std::string& text, json::value finish) {
    return json::object{{"id", id},
                        {"object", "text_completion"},
                        {"created", created},
                        {"model", a.model},
                        {"choices", json::array{json::object{{"text", text}, {"index", 0}, {"logprobs", nullptr},
                                                             {"finish_reason", finish}}}}};
  };
  std::vector<json::object> out;
  if (!a.content.empty()) out.push_back(event(a.content, nullptr));
  out.push_back(event("", json::value(finish_reason(a))));
  if (req.include_usage) {
    json::object usage = openai_answer_json(req, a, id, created);
    usage["choices"] = json::array{};
    out.push_back(std::move(usage));
  }
  return out;
}

json::object error_json(int status, const std::string& message) {
  const char* type = status == 401   ? "authentication_error"
                     : status == 404 ? "not_found_error"
                     : status == 503 ? "unavailable_error"
                     : status >= 500 ? "server_error"
                                     : "invalid_request_error";
  return json::object{{"error", json::object{{"code", status}, {"message", message}, {"type", type}}}};
}

}  // namespace qf::http
