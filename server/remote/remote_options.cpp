// The schema of a remote source's members and the options read from a
// validated source object (see remote_options.h).
#include "server/remote/remote_options.h"

#include <boost/json.hpp>
#include <cctype>
#include <set>

#include "server/completion/api/fim_families.h"
#include "server/net/url.h"

namespace qf::remote {

namespace json = boost::json;
namespace sc = server::schema;
using server::completion::fim_families;
using server::completion::fim_family_aliases;
using server::completion::find_fim_family;

const char* protocol_name(remote_protocol p) {
  return p == remote_protocol::openai ? "openai" : "llama-infill";
}

namespace {

// Member rules beyond type and range. Their reasons never echo the value.
bool base_url(std::string_view s, std::string* why) {
  std::string err;
  if (!net::parse_url(std::string(s), &err)) return *why = "not an http(s) URL (" + err + ")", false;
  if (s.find('?') != std::string_view::npos || s.find('#') != std::string_view::npos)
    return *why = "must be a base URL without a query or fragment", false;
  if (s.find('@') != std::string_view::npos)
    return *why = "must not hold credentials (use apiKeyEnv or apiKeyFile)", false;
  return true;
}

bool absolute_path(std::string_view s, std::string* why) {
  // Never relative: the server's working directory is the editor's (often a
  // repository), and the daemon's is /.
  if (s.empty() || s[0] != '/') return *why = "must be an absolute path", false;
  return true;
}

bool env_name(std::string_view s, std::string* why) {
  for (char c : s)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_'))
      return *why = "must be the name of an environment variable (letters, digits, '_')", false;
  return true;
}

bool fim_template(std::string_view s, std::string* why) {
  if (find_fim_family(s)) return true;
  if (s.find("{prefix}") != std::string_view::npos && s.find("{suffix}") != std::string_view::npos) return true;
  std::string names;
  for (const auto& f : fim_families()) names += std::string(names.empty() ? "" : ", ") + std::string(f.name);
  for (const auto& [alias, family] : fim_family_aliases()) names += ", " + std::string(alias);
  *why = "must be one of " + names + " or a template holding {prefix} and {suffix}";
  return false;
}

const std::string& fim_template_expected() {
  static const std::string text = [] {
    std::string out;
    for (const auto& f : fim_families()) out += std::string(out.empty() ? "" : ", ") + "`" + std::string(f.name) + "`";
    out += " (also";
    bool first = true;
    for (const auto& [alias, family] : fim_family_aliases()) {
      out += std::string(first ? " " : ", ") + "`" + std::string(alias) + "` for `" + std::string(family) + "`";
      first = false;
    }
    return out + "), or a template holding `{prefix}` and `{suffix}`";
  }();
  return text;
}

sc::object_schema make_schema() {
  using M = sc::member_schema;
  using T = sc::value_type;
  const std::size_t max_chars = 1 << 20;
  return {"a remote source",
          {
              M{.name = "endpoints", .type = T::string_list, .required = true, .non_empty = true, .max_items = 64,
                .check = base_url,
                .expected = "a non-empty array of at most 64 base URLs, `http://` or `https://`",
                .doc = "Base URLs of the server (several: spread by document over a consistent-hash ring); the "
                       "protocol's path (`/v1/completions`, `/infill`) is appended; no credentials, no repeats."},
              M{.name = "model", .type = T::string, .default_value = "", .doc = "Sent as `model` on `/v1/completions`."},
              M{.name = "apiKeyEnv", .type = T::string, .default_value = "", .check = env_name,
                .expected = "the name of an environment variable (letters, digits, `_`)",
                .doc = "The environment variable holding the API key (not both this and `apiKeyFile`)."},
              M{.name = "apiKeyFile", .type = T::string, .default_value = "",
                .check = +[](std::string_view s, std::string* why) { return s.empty() || absolute_path(s, why); },
                .expected = "an absolute path",
                .doc = "A file holding the API key, as an absolute path (its trailing line end is dropped)."},
              M{.name = "caFile", .type = T::string, .default_value = "",
                .check = +[](std::string_view s, std::string* why) { return s.empty() || absolute_path(s, why); },
                .expected = "an absolute path",
                .doc = "PEM certificates to trust (a self-signed server's), as an absolute path; verification is "
                       "always on."},
              M{.name = "connectTimeoutMs", .type = T::integer, .default_value = 2000, .min = 1, .max = 60000,
                .doc = "Resolve + connect + TLS handshake, never past the request's deadline."},
              M{.name = "readTimeoutMs", .type = T::integer, .default_value = 10000, .min = 1, .max = 600000,
                .doc = "The longest silence inside a stream."},
              M{.name = "maxTokens", .type = T::integer, .default_doc = "the request's limit", .min = 1, .max = 4096,
                .doc = "Token limit of this source's answers. Absent: the limit the local model would use, "
                       "`completion.maxTokens` for automatic triggers and `completion.maxTokensExplicit` for "
                       "explicit invocations (an HTTP client's `n_predict` within the latter)."},
              M{.name = "temperature", .type = T::number, .default_value = 0.0, .min = 0, .max = 2,
                .doc = "Sent as `temperature`."},
              M{.name = "retries", .type = T::integer, .default_value = 1, .min = 0, .max = 5,
                .doc = "Retries per endpoint of a failure before any data arrived."},
              M{.name = "retryBackoffMs", .type = T::integer, .default_value = 25, .min = 1, .max = 10000,
                .doc = "The first retry's wait, doubled for each next one."},
              M{.name = "stop", .type = T::string_list, .default_value = json::array{}, .max_items = 8,
                .doc = "Strings that end a completion (non-empty)."},
              M{.name = "fimTemplate", .type = T::string, .default_value = "", .check = fim_template,
                .expected = fim_template_expected(),
                .doc = "`openai` only: empty sends the prefix as `prompt` and the suffix as `suffix` (vLLM, SGLang, "
                       "TGI, OpenAI); a FIM family's name (completion/api/fim_families.h) or a template formats the "
                       "FIM prompt here and sends no `suffix` (for servers that ignore `suffix` or do not know the "
                       "model's FIM tokens)."},
              M{.name = "slots", .type = T::integer, .default_value = 0, .min = 0, .max = 1024,
                .doc = "`llama-infill` only: the server's slot count (`-np`); each document is pinned to slot "
                       "`hash(uri) % slots` (`id_slot`). 0: the server picks."},
              M{.name = "maxPrefixChars", .type = T::integer, .default_value = 8192, .min = 0, .max = max_chars,
                .doc = "Prompt budget before the cursor, cut at a line start."},
              M{.name = "maxSuffixChars", .type = T::integer, .default_value = 2048, .min = 0, .max = max_chars,
                .doc = "Prompt budget after the cursor, cut after a line end."},
              M{.name = "maxExtraChars", .type = T::integer, .default_value = 4096, .min = 0, .max = max_chars,
                .doc = "Other files' chunks (`llama-infill`'s `input_extra`)."},
              M{.name = "breakerFailures", .type = T::integer, .default_value = 3, .min = 1, .max = 100,
                .doc = "Failures in a row that open an endpoint's circuit breaker."},
              M{.name = "breakerCoolDownMs", .type = T::integer, .default_value = 5000, .min = 100, .max = 3600000,
                .doc = "How long an open breaker rests the endpoint."},
              M{.name = "streamUsage", .type = T::boolean, .default_value = true,
                .doc = "`openai` only: ask for the token usage in the stream (`stream_options.include_usage`); "
                       "false for a server that refuses the option (the prompt's tokens are then estimated)."},
          }};
}

const sc::member_schema& kind_member() {
  static const sc::member_schema m{.name = "kind", .type = sc::value_type::string, .choices = {"openai", "llama-infill"},
                                   .required = true};
  return m;
}

}  // namespace

const sc::object_schema& remote_source_schema() {
  static const sc::object_schema s = make_schema();
  return s;
}

std::optional<remote_options> parse_remote_source(const json::object& o, std::string* error, const std::string& path) {
  std::string sink;
  if (!error) error = &sink;
  remote_options r;
  if (const json::value* n = o.if_contains("name"); n && n->is_string()) r.name = std::string(n->get_string());
  // Called on its own, the messages name the source.
  const std::string label = r.name.empty() ? "remote source" : "remote source '" + r.name + "'";
  auto fail = [&](const std::string& msg) -> std::optional<remote_options> {
    *error = path.empty() ? label + ": " + msg : msg;
    return std::nullopt;
  };
  // A key in the settings is refused before anything else, and never echoed.
  for (const char* secret : {"apiKey", "api_key", "key", "token", "authorization", "Authorization"})
    if (o.contains(secret))
      return fail(sc::member_path(path, secret) +
                  ": not accepted: the API key must not be in the settings; name an environment variable "
                  "(apiKeyEnv) or a file (apiKeyFile) that holds it");
  std::string why;
  const json::value* kind = o.if_contains("kind");
  if (!kind || kind->is_null()) return fail(sc::member_path(path, "kind") + ": missing (expected " +
                                            sc::accepted(kind_member(), false) + ")");
  if (!sc::validate(kind_member(), *kind, sc::member_path(path, "kind"), &why)) return fail(why);
  r.protocol = kind->get_string() == "openai" ? remote_protocol::openai : remote_protocol::llama_infill;
  auto v = sc::validate_object(remote_source_schema(), o, path, &why, {"name", "kind", "quota"});
  if (!v) return fail(why);

  const std::vector<std::string> endpoints = sc::get_strings(*v, "endpoints");
  std::set<std::string> seen;
  for (std::size_t i = 0; i < endpoints.size(); ++i) {
    std::string s = endpoints[i];
    while (!s.empty() && s.back() == '/') s.pop_back();
    if (!seen.insert(s).second)
      return fail(sc::item_path(sc::member_path(path, "endpoints"), i) + ": repeats " + s);
    r.endpoints.push_back(std::move(s));
  }
  r.model = sc::get_string(*v, "model");
  r.key.env = sc::get_string(*v, "apiKeyEnv");
  r.key.file = sc::get_string(*v, "apiKeyFile");
  r.ca_file = sc::get_string(*v, "caFile");
  r.connect_timeout = std::chrono::milliseconds(sc::get_int(*v, "connectTimeoutMs"));
  r.read_timeout = std::chrono::milliseconds(sc::get_int(*v, "readTimeoutMs"));
  r.max_tokens = static_cast<int>(sc::get_int(*v, "maxTokens", 0));
  r.temperature = sc::get_number(*v, "temperature");
  r.retries = static_cast<int>(sc::get_int(*v, "retries"));
  r.retry_backoff = std::chrono::milliseconds(sc::get_int(*v, "retryBackoffMs"));
  r.stop = sc::get_strings(*v, "stop");
  r.slots = static_cast<int>(sc::get_int(*v, "slots"));
  r.max_prefix_chars = static_cast<std::size_t>(sc::get_int(*v, "maxPrefixChars"));
  r.max_suffix_chars = static_cast<std::size_t>(sc::get_int(*v, "maxSuffixChars"));
  r.max_extra_chars = static_cast<std::size_t>(sc::get_int(*v, "maxExtraChars"));
  r.breaker_failures = static_cast<int>(sc::get_int(*v, "breakerFailures"));
  r.breaker_cool_down = std::chrono::milliseconds(sc::get_int(*v, "breakerCoolDownMs"));
  r.stream_usage = sc::get_bool(*v, "streamUsage", true);

  // Rules across members.
  if (!r.key.env.empty() && !r.key.file.empty())
    return fail(sc::member_path(path, "apiKeyEnv") + ": give either apiKeyEnv or apiKeyFile, not both");
  const std::string fim = sc::get_string(*v, "fimTemplate");
  if (!fim.empty()) {
    if (r.protocol != remote_protocol::openai)
      return fail(sc::member_path(path, "fimTemplate") +
                  ": applies to kind \"openai\" only (llama-infill formats the prompt on the server)");
    const auto* family = find_fim_family(fim);
    r.fim_template = family ? server::completion::fim_text_template(*family) : fim;
  }
  if (r.slots > 0 && r.protocol != remote_protocol::llama_infill)
    return fail(sc::member_path(path, "slots") + ": applies to kind \"llama-infill\" only");
  if (o.contains("streamUsage") && !o.at("streamUsage").is_null() && r.protocol != remote_protocol::openai)
    return fail(sc::member_path(path, "streamUsage") +
                ": applies to kind \"openai\" only (llama-infill reports its tokens anyway)");
  return r;
}

}  // namespace qf::remote
