// The two wire protocols of remote completion sources: request bodies, and
// the events of their streamed answers.
//
// openai: POST {base}/v1/completions (vLLM, SGLang, TGI, llama-server, OpenAI)
//   {"model", "prompt", "suffix", "max_tokens", "temperature", "stop",
//    "stream": true, "stream_options": {"include_usage": true}} (the last
//    unless the source's streamUsage is false). With a fimTemplate the FIM prompt is formatted here
//   ({prefix}/{suffix} substituted) and "suffix" is not sent. The stream is
//   `data: {"choices":[{"text":..., "finish_reason":...}]}` events ending in
//   `data: [DONE]`; with include_usage the last event before it holds
//   "usage": {"prompt_tokens", "completion_tokens"} (servers that do not know
//   the option ignore it and send no usage).
// llama-infill: POST {base}/infill (llama-server)
//   {"input_prefix", "input_suffix", "input_extra": [{"filename","text"}],
//    "n_predict", "temperature", "stop", "cache_prompt": true,
//    "id_slot" (when the source pins documents to slots), "stream": true}.
//   The stream is `data: {"content": ..., "stop": bool}` events; the one
//   with "stop": true is the last, and holds "tokens_evaluated" (the prompt's
//   tokens) and "tokens_predicted".
// Both: an event {"error": {...}} is the server's failure mid-stream.
//
// parse_event() turns one event into a piece of text; it throws
// server::source_failure (protocol) for an event that is not what the
// protocol sends, and (unavailable) for an error event.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "server/remote/remote_prompt.h"
#include "server/remote/remote_options.h"
#include "server/remote/sse_parser.h"

namespace qf::remote {

struct api_request {
  std::string path;  // appended to the endpoint's base URL
  std::string body;  // JSON
  std::size_t prompt_bytes = 0;  // the prompt text in it (prefix, suffix, extra chunks or the filled template)
};

// `slot`: llama-server's id_slot, or -1 to let the server pick.
// `max_tokens` is the request's token limit, used when the source sets no
// maxTokens of its own (remote_options.h).
api_request make_api_request(const remote_options& o, const prompt_parts& p, int slot, int max_tokens);

struct stream_piece {
  std::string text;
  bool done = false;          // the last event of the answer
  std::string finish_reason;  // "stop", "length", ... when the server said
  // Token counts when the server reported them (on the last events).
  std::optional<int64_t> prompt_tokens, completion_tokens;
};

stream_piece parse_event(remote_protocol protocol, const sse_event& e);

// The message of an error body (`{"error": {"message": ...}}` or
// `{"error": "..."}`), cut to 200 bytes; "" when the body says nothing usable.
std::string error_body_message(std::string_view body);

}  // namespace qf::remote
