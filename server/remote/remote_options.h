// The settings of one remote completion source: their schema, and the
// options read from a validated source object.
//
// A source is one JSON object in the router's list of sources. The router
// reads the members every source has ("name", "kind", "quota");
// parse_remote_source() accepts those (it reads "kind", which must be
// "openai" or "llama-infill" and selects the protocol, and "name" for
// messages; it ignores "quota") and validates the rest against
// remote_source_schema() with the settings validator
// (completion/api/setting_schema.h): unknown members, wrong types and
// out-of-range values are refused with one message naming the member's path.
// The rules across members (apiKeyEnv or apiKeyFile, protocol-only members)
// follow. Keys are never members: "apiKey" (or "key", "token") is refused
// without echoing its value, pointing at apiKeyEnv / apiKeyFile.
//
// The members, their ranges and defaults are in remote_source_schema() (and,
// rendered from it, docs/configuration.md). `maxTokens` has no default of its
// own: absent, a request asks for the token limit the local model would use
// (completion.maxTokens for automatic triggers, completion.maxTokensExplicit
// for explicit invocations, an HTTP client's n_predict within the latter).
#pragma once

#include <chrono>
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include <boost/json/object.hpp>

#include "server/completion/api/setting_schema.h"
#include "server/remote/api_key.h"

namespace qf::remote {

enum class remote_protocol { openai, llama_infill };
const char* protocol_name(remote_protocol p);  // "openai", "llama-infill"

struct remote_options {
  std::string name;  // for messages ("" -> "remote")
  remote_protocol protocol = remote_protocol::openai;
  std::vector<std::string> endpoints;  // base URLs, without a trailing '/'
  std::string model;
  api_key_source key;
  std::string ca_file;
  std::chrono::milliseconds connect_timeout{2000};
  std::chrono::milliseconds read_timeout{10000};
  int max_tokens = 0;  // 0: the request's limit (completion.maxTokens / maxTokensExplicit)
  double temperature = 0;
  int retries = 1;
  std::chrono::milliseconds retry_backoff{25};
  std::vector<std::string> stop;
  std::string fim_template;  // "" -> send "suffix"; else a template with {prefix} and {suffix}
  int slots = 0;
  std::size_t max_prefix_chars = 8192;
  std::size_t max_suffix_chars = 2048;
  std::size_t max_extra_chars = 4096;
  int breaker_failures = 3;
  std::chrono::milliseconds breaker_cool_down{5000};
  bool stream_usage = true;
};

// The members of a remote source besides name, kind and quota.
const server::schema::object_schema& remote_source_schema();

// Validates one source object; nullopt with *error (fit for a user, no
// secrets). `path` names the object in messages ("sources[1]"); "" names it
// "remote source 'NAME'".
std::optional<remote_options> parse_remote_source(const boost::json::object& o, std::string* error,
                                                  const std::string& path = "");

}  // namespace qf::remote
