// The request and answer bodies of the llama-server-compatible endpoint
// (http_server.h): POST /infill (llama.cpp's server, as llama.vim and
// llama.vscode send it) and POST /v1/completions (OpenAI's legacy
// completions with `suffix`, as Continue and our own `openai` source send it).
//
// Parsing is strict about what it reads and about names: a field of the
// wrong type is refused with its name, and a field this server does not know
// is refused too (the list of fields llama-server and OpenAI define is
// accepted, the sampling ones read and ignored: quickfill decodes greedily),
// so a misspelt option is an error rather than silently dropped. Answers are
// built here as JSON; `response_fields` selects fields by path the way
// llama-server does ("timings/prompt_n" becomes a top-level key of that name).
// Nothing here knows the engine, HTTP or sockets.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <boost/json/value.hpp>

namespace qf::http {

struct fim_chunk {
  std::string filename;
  std::string text;
};

// One fill-in-the-middle request, from either protocol.
struct fim_request {
  bool openai = false;        // /v1/completions (else /infill)
  std::string prefix;         // input_prefix | prompt
  std::string middle;         // /infill "prompt": the text of the cursor's line before it
  std::string suffix;         // input_suffix | suffix
  std::vector<fim_chunk> extra;  // input_extra
  int id_slot = -1;
  int n_predict = -1;         // n_predict | max_tokens; -1: the server's limit; 0: evaluate only
  int n_indent = 0;           // stop at a later line indented less than this
  std::vector<std::string> stop;
  bool stream = false;
  bool include_usage = false;  // stream_options.include_usage
  double t_max_prompt_ms = 0;  // 0: not given
  double t_max_predict_ms = 0;
  std::optional<std::vector<std::string>> response_fields;
  std::string model;
};

// Parses a body; nullopt with a one-line reason naming the field.
std::optional<fim_request> parse_infill(std::string_view body, std::string* error);
std::optional<fim_request> parse_openai_completion(std::string_view body, std::string* error);

// What the engine made of a request, in the terms both protocols answer with.
struct fim_answer {
  std::string content;
  std::string stop_type = "eos";  // "eos", "limit", "word" (a stop string), "none"
  std::string stopping_word;
  bool truncated = false;
  int id_slot = 0;
  long long prompt_n = 0;     // prompt tokens evaluated
  long long cached_n = 0;     // prompt tokens served from the KV cache
  long long predicted_n = 0;
  double prompt_ms = 0;
  double predicted_ms = 0;
  std::string model;
};

// Cuts `content` at the first stop string (sets stop_type "word") and, with
// n_indent > 0, before the first later line that is indented less than
// n_indent (llama-server's rule), keeping what precedes it.
void apply_stops(const fim_request& req, fim_answer& a);

boost::json::object infill_answer_json(const fim_request& req, const fim_answer& a);
// The streamed form: one event with the content, then the final one.
std::vector<boost::json::object> infill_stream_events(const fim_request& req, const fim_answer& a);
boost::json::object openai_answer_json(const fim_request& req, const fim_answer& a, const std::string& id,
                                       long long created);
std::vector<boost::json::object> openai_stream_events(const fim_request& req, const fim_answer& a,
                                                      const std::string& id, long long created);
// {"error":{"code":..,"message":..,"type":..}} (llama-server's and OpenAI's shape).
boost::json::object error_json(int status, const std::string& message);

}  // namespace qf::http
