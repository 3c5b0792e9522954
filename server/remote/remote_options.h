// The settings of one remote completion source, and their validation.
//
// A source is one JSON object in the router's list of sources. The router
// reads the members every source has ("name", "kind", "quota") itself;
// parse_remote_source() accepts those (it reads "kind", which must be
// "openai" or "llama-infill" and selects the protocol, and "name" for
// messages; it ignores "quota") and validates the rest, refusing unknown
// members, wrong types and out-of-range values with one clear message that
// names the member. Keys are never members: "apiKey" (or "key", "token") is
// refused without echoing its value, pointing at apiKeyEnv / apiKeyFile.
//
// Members (all optional unless said):
//   endpoints          array of base URLs, http:// or https:// (required, at
//                      least one, no duplicates); the protocol's path
//                      (/v1/completions, /infill) is appended
//   model              string, sent as "model" on /v1/completions
//   apiKeyEnv          the environment variable holding the key
//   apiKeyFile         a file holding the key (not both)
//   caFile             PEM file of certificates to trust (self-signed servers);
//                      verification is always on
//   connectTimeoutMs   1..60000 (default 2000)
//   readTimeoutMs      1..600000, the longest silence in a stream (default 10000)
//   maxTokens          1..4096 (default 64)
//   temperature        0..2 (default 0)
//   retries            0..5 per endpoint, for failures before any data (default 1)
//   retryBackoffMs     1..10000, the first retry's wait, doubled after (default 25)
//   stop               array of up to 8 strings ending a completion
//   fimTemplate        openai only: how the prompt is made. Absent: "prompt"
//                      is the prefix and "suffix" the suffix (vLLM, SGLang,
//                      TGI, OpenAI). A preset ("starcoder", "qwen",
//                      "codellama", "deepseek", "codegemma") or a template
//                      holding {prefix} and {suffix} formats the FIM prompt
//                      here and sends no "suffix" (for servers that ignore
//                      "suffix" or a model whose FIM tokens they do not know)
//   slots              llama-infill only: the server's slot count (-np); when
//                      set, each document is pinned to slot hash(uri) % slots
//                      ("id_slot"), 0..1024 (default 0: the server picks)
//   maxPrefixChars     prompt budget before the cursor (default 8192)
//   maxSuffixChars     after the cursor (default 2048)
//   maxExtraChars      other files' chunks, llama-infill's input_extra (default 4096)
//   breakerFailures    1..100 failures in a row that open an endpoint's breaker (default 3)
//   breakerCoolDownMs  100..3600000 (default 5000)
//   streamUsage        openai only: ask for the token usage in the stream
//                      (stream_options.include_usage; default true); false
//                      for a server that refuses the option (the prompt's
//                      tokens are then estimated)
#pragma once

#include <chrono>
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include <boost/json/object.hpp>

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
  int max_tokens = 64;
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

// Validates one source object; nullopt with *error (fit for a user, no secrets).
std::optional<remote_options> parse_remote_source(const boost::json::object& o, std::string* error);

}  // namespace qf::remote
