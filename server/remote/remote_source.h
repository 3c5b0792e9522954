// A completion source that asks an HTTP inference server (see docs/remote.md).
//
// remote_source implements completion_provider over the wire: complete()
// cuts the prompt parts (remote_prompt.h), picks the document's endpoint on
// the hash ring (endpoint_ring.h), POSTs the protocol's request
// (remote_api.h) with "stream": true through server/net's client, and turns
// the server-sent events (sse_parser.h) into text as they arrive. The text
// goes through the same trigger, stop rules and cleanup as the local
// pipeline's (server/completion/postprocess/: trigger.h, stop_rules.h,
// cleanup.h), and the stream is closed as soon as a stop rule ends the
// completion, the request's deadline comes (it then answers with what
// arrived, marked incomplete) or its cancel token is set: closing the
// connection is what makes the server stop generating.
//
// Failures: a failure before any byte of the answer (connection refused,
// reset, HTTP 429/500/502/503/504) is retried on the same endpoint up to
// `retries` times with exponential backoff, never past the deadline; then,
// and after any failure once data arrived, the endpoint's circuit breaker
// counts it and the document fails over to the next endpoint of its ring
// order. An open breaker skips its endpoint without a connection. When no
// endpoint answers complete() throws server::source_failure with the kind of
// the last failure (unavailable, timeout, protocol, refused; circuit_open
// when every breaker is open). 4xx answers other than 429 are refused:
// neither retried nor failed over (the request or the key is wrong, and
// every endpoint would say so). Messages never hold the API key (scrubbed)
// nor document text.
//
// The router (one list of sources, tried in order) makes a remote source
// from its JSON object through the two functions below.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <boost/json/object.hpp>

#include "server/completion/api/completion_provider.h"
#include "server/remote/circuit_breaker.h"
#include "server/remote/endpoint_ring.h"
#include "server/remote/remote_options.h"

namespace qf::remote {

// parse_remote_source() (remote_options.h) validates the object; this makes
// the source, reading the API key (api_key.h) and checking the CA file. nullptr
// with *error (no secrets) when it cannot.
std::unique_ptr<server::completion_provider> make_remote_source(const remote_options& o, std::string* error);

class remote_source final : public server::completion_provider {
 public:
  remote_source(remote_options o, std::string api_key);

  server::completion_result complete(const server::completion_request& req, const cancel_token& cancel) override;
  void configure(const server::completion::completion_settings& settings) override { settings_ = settings; }
  std::string describe() const override;
  server::source_health health() const override;

  const endpoint_ring& ring() const { return ring_; }
  circuit_breaker::state endpoint_state(std::size_t i) const;
  // Requests sent over the wire (attempts, retries included), for tests and benchmarks.
  std::size_t attempts() const { return attempts_; }

 private:
  remote_options o_;
  std::string key_;
  endpoint_ring ring_;
  std::vector<circuit_breaker> breakers_;
  server::completion::completion_settings settings_;
  std::size_t attempts_ = 0;
  std::string last_failure_;  // scrubbed, for health()
};

}  // namespace qf::remote
