// Validation of a remote source's JSON object (see remote_options.h).
#include "server/remote/remote_options.h"

#include <boost/json.hpp>
#include <cmath>
#include <set>

#include "server/net/url.h"

namespace qf::remote {

namespace json = boost::json;

const char* protocol_name(remote_protocol p) {
  return p == remote_protocol::openai ? "openai" : "llama-infill";
}

namespace {

struct fim_preset {
  const char* name;
  const char* tmpl;
};
constexpr fim_preset fim_presets[] = {
    {"starcoder", "<fim_prefix>{prefix}<fim_suffix>{suffix}<fim_middle>"},
    {"qwen", "<|fim_prefix|>{prefix}<|fim_suffix|>{suffix}<|fim_middle|>"},
    {"codegemma", "<|fim_prefix|>{prefix}<|fim_suffix|>{suffix}<|fim_middle|>"},
    {"codellama", "<PRE> {prefix} <SUF>{suffix} <MID>"},
    {"deepseek", "<\xef\xbd\x9c" "fim\xe2\x96\x81" "begin\xef\xbd\x9c>{prefix}<\xef\xbd\x9c" "fim\xe2\x96\x81"
                 "hole\xef\xbd\x9c>{suffix}<\xef\xbd\x9c" "fim\xe2\x96\x81" "end\xef\xbd\x9c>"},
};

class validator {
 public:
  validator(const json::object& o, std::string* error) : o_(o), error_(error) {}

  bool failed() const { return failed_; }

  bool fail(const std::string& msg) {
    if (!failed_ && error_) *error_ = where() + msg;
    failed_ = true;
    return false;
  }

  std::string where() const { return name_.empty() ? "remote source: " : "remote source '" + name_ + "': "; }
  void set_name(std::string n) { name_ = std::move(n); }

  const json::value* get(const char* key) const {
    auto it = o_.find(key);
    return it == o_.end() ? nullptr : &it->value();
  }

  bool string(const char* key, std::string& out, bool non_empty = true) {
    const json::value* v = get(key);
    if (!v) return true;
    if (!v->is_string()) return fail(std::string(key) + " must be a string");
    out = std::string(v->as_string());
    if (non_empty && out.empty()) return fail(std::string(key) + " must not be empty");
    return true;
  }

  bool integer(const char* key, long long lo, long long hi, long long& out) {
    const json::value* v = get(key);
    if (!v) return true;
    long long x = 0;
    if (v->is_int64()) {
      x = v->as_int64();
    } else if (v->is_uint64()) {
      x = v->as_uint64() > static_cast<std::uint64_t>(hi) ? hi + 1 : static_cast<long long>(v->as_uint64());
    } else if (v->is_double() && std::floor(v->as_double()) == v->as_double() && std::fabs(v->as_double()) < 1e15) {
      x = static_cast<long long>(v->as_double());
    } else {
      return fail(std::string(key) + " must be an integer");
    }
    if (x < lo || x > hi)
      return fail(std::string(key) + " must be between " + std::to_string(lo) + " and " + std::to_string(hi) +
                  " (got " + std::to_string(x) + ")");
    out = x;
    return true;
  }

  template <class T>
  bool integer_as(const char* key, long long lo, long long hi, T& out) {
    long long x = static_cast<long long>(out);
    if (!integer(key, lo, hi, x)) return false;
    out = static_cast<T>(x);
    return true;
  }

  bool millis(const char* key, long long lo, long long hi, std::chrono::milliseconds& out) {
    long long x = out.count();
    if (!integer(key, lo, hi, x)) return false;
    out = std::chrono::milliseconds(x);
    return true;
  }

  bool number(const char* key, double lo, double hi, double& out) {
    const json::value* v = get(key);
    if (!v) return true;
    double x = 0;
    if (v->is_double()) x = v->as_double();
    else if (v->is_int64()) x = static_cast<double>(v->as_int64());
    else if (v->is_uint64()) x = static_cast<double>(v->as_uint64());
    else return fail(std::string(key) + " must be a number");
    if (!(x >= lo && x <= hi))
      return fail(std::string(key) + " must be between " + json::serialize(json::value(lo)) + " and " +
                  json::serialize(json::value(hi)));
    out = x;
    return true;
  }

 private:
  const json::object& o_;
  std::string* error_;
  std::string name_;
  bool failed_ = false;
};

const std::set<std::string>& known_members() {
  static const std::set<std::string> k{
      "name", "kind", "quota", "endpoints", "model", "apiKeyEnv", "apiKeyFile", "caFile", "connectTimeoutMs",
      "readTimeoutMs", "maxTokens", "temperature", "retries", "retryBackoffMs", "stop", "fimTemplate", "slots",
      "maxPrefixChars", "maxSuffixChars", "maxExtraChars", "breakerFailures", "breakerCoolDownMs", "streamUsage"};
  return k;
}

bool parse_endpoints(validator& v, remote_options& r) {
  const json::value* e = v.get("endpoints");
  if (!e) return v.fail("endpoints is required (an array of base URLs such as \"http://127.0.0.1:8080\")");
  if (!e->is_array() || e->as_array().empty()) return v.fail("endpoints must be a non-empty array of URLs");
  if (e->as_array().size() > 64) return v.fail("endpoints may list at most 64 URLs");
  std::set<std::string> seen;
  for (std::size_t i = 0; i < e->as_array().size(); ++i) {
    const json::value& u = e->as_array()[i];
    const std::string at = "endpoints[" + std::to_string(i) + "]";
    if (!u.is_string()) return v.fail(at + " must be a string");
    std::string s(u.as_string());
    std::string why;
    auto parsed = net::parse_url(s, &why);
    if (!parsed) return v.fail(at + " is not an http(s) URL: " + why);
    if (s.find('?') != std::string::npos || s.find('#') != std::string::npos)
      return v.fail(at + " must be a base URL without a query or fragment");
    if (s.find('@') != std::string::npos) return v.fail(at + " must not hold credentials (use apiKeyEnv or apiKeyFile)");
    while (!s.empty() && s.back() == '/') s.pop_back();
    if (!seen.insert(s).second) return v.fail(at + " repeats " + s);
    r.endpoints.push_back(std::move(s));
  }
  return true;
}

bool parse_stop(validator& v, remote_options& r) {
  const json::value* s = v.get("stop");
  if (!s) return true;
  if (!s->is_array()) return v.fail("stop must be an array of strings");
  if (s->as_array().size() > 8) return v.fail("stop may hold at most 8 strings");
  for (const auto& x : s->as_array()) {
    if (!x.is_string() || x.as_string().empty()) return v.fail("stop must hold non-empty strings");
    r.stop.emplace_back(x.as_string());
  }
  return true;
}

bool parse_fim(validator& v, remote_options& r) {
  std::string t;
  if (!v.string("fimTemplate", t)) return false;
  if (t.empty()) return true;
  if (r.protocol != remote_protocol::openai)
    return v.fail("fimTemplate applies to kind \"openai\" only (llama-infill formats the prompt on the server)");
  for (const auto& p : fim_presets)
    if (t == p.name) {
      r.fim_template = p.tmpl;
      return true;
    }
  if (t.find("{prefix}") == std::string::npos || t.find("{suffix}") == std::string::npos) {
    std::string names;
    for (const auto& p : fim_presets) names += std::string(names.empty() ? "" : ", ") + p.name;
    return v.fail("fimTemplate must be one of " + names + " or a template holding {prefix} and {suffix}");
  }
  r.fim_template = t;
  return true;
}

}  // namespace

std::optional<remote_options> parse_remote_source(const json::object& o, std::string* error) {
  validator v(o, error);
  remote_options r;
  if (!v.string("name", r.name)) return std::nullopt;
  v.set_name(r.name);
  // A key in the settings is refused before anything else, and never echoed.
  for (const char* secret : {"apiKey", "api_key", "key", "token", "authorization", "Authorization"})
    if (o.contains(secret)) {
      v.fail(std::string("'") + secret +
             "' is not accepted: the API key must not be in the settings; name an environment variable "
             "(apiKeyEnv) or a file (apiKeyFile) that holds it");
      return std::nullopt;
    }
  for (const auto& kv : o)
    if (!known_members().count(std::string(kv.key()))) {
      v.fail("unknown member '" + std::string(kv.key()) + "'");
      return std::nullopt;
    }
  std::string kind;
  if (!v.string("kind", kind)) return std::nullopt;
  if (kind == "openai") r.protocol = remote_protocol::openai;
  else if (kind == "llama-infill") r.protocol = remote_protocol::llama_infill;
  else if (kind.empty()) return v.fail("kind is required (\"openai\" or \"llama-infill\")"), std::nullopt;
  else return v.fail("kind must be \"openai\" or \"llama-infill\" for a remote source (got \"" + kind + "\")"), std::nullopt;

  bool ok = parse_endpoints(v, r) && v.string("model", r.model) && v.string("apiKeyEnv", r.key.env) &&
            v.string("apiKeyFile", r.key.file) && v.string("caFile", r.ca_file) &&
            v.millis("connectTimeoutMs", 1, 60000, r.connect_timeout) &&
            v.millis("readTimeoutMs", 1, 600000, r.read_timeout) && v.integer_as("maxTokens", 1, 4096, r.max_tokens) &&
            v.number("temperature", 0, 2, r.temperature) && v.integer_as("retries", 0, 5, r.retries) &&
            v.millis("retryBackoffMs", 1, 10000, r.retry_backoff) && parse_stop(v, r) && parse_fim(v, r) &&
            v.integer_as("slots", 0, 1024, r.slots) && v.integer_as("maxPrefixChars", 0, 1 << 20, r.max_prefix_chars) &&
            v.integer_as("maxSuffixChars", 0, 1 << 20, r.max_suffix_chars) &&
            v.integer_as("maxExtraChars", 0, 1 << 20, r.max_extra_chars) &&
            v.integer_as("breakerFailures", 1, 100, r.breaker_failures) &&
            v.millis("breakerCoolDownMs", 100, 3600000, r.breaker_cool_down);
  if (!ok) return std::nullopt;
  if (!r.key.env.empty() && !r.key.file.empty()) return v.fail("give either apiKeyEnv or apiKeyFile, not both"), std::nullopt;
  // Never relative: the server's working directory is the editor's (often a
  // repository), and the daemon's is /.
  if (!r.key.file.empty() && r.key.file[0] != '/') return v.fail("apiKeyFile must be an absolute path"), std::nullopt;
  if (!r.ca_file.empty() && r.ca_file[0] != '/') return v.fail("caFile must be an absolute path"), std::nullopt;
  if (r.slots > 0 && r.protocol != remote_protocol::llama_infill)
    return v.fail("slots applies to kind \"llama-infill\" only"), std::nullopt;
  if (const json::value* su = v.get("streamUsage")) {
    if (!su->is_bool()) return v.fail("streamUsage must be true or false"), std::nullopt;
    if (r.protocol != remote_protocol::openai)
      return v.fail("streamUsage applies to kind \"openai\" only (llama-infill reports its tokens anyway)"), std::nullopt;
    r.stream_usage = su->as_bool();
  }
  if (!r.key.env.empty()) {
    for (char c : r.key.env)
      if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_'))
        return v.fail("apiKeyEnv must be the name of an environment variable (letters, digits, '_')"), std::nullopt;
  }
  return r;
}

}  // namespace qf::remote
