// How a completion source says it could not answer: complete() throws
// source_failure when it produced nothing because of a failure of its own (a
// remote endpoint down, timed out or refusing, an open circuit breaker, a
// spent quota), as opposed to an answer with no items. A router catches it and
// tries the next source; without one the server answers an empty list and
// records the request as failed. The message must be fit to show a user: it
// never holds credentials or document text. A failure after the request went
// out carries the tokens it spent anyway (spent()), which the router counts
// against the source's quota.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

#include <boost/describe/enum.hpp>
#include <boost/describe/enum_to_string.hpp>

namespace qf::server {

// Described (Boost.Describe): failure_kind_name is the enumerator's name.
BOOST_DEFINE_ENUM_CLASS(failure_kind,
  unavailable,   // could not connect, or the endpoint answered 5xx/429
  timeout,       // no answer (or no first token) in time
  protocol,      // the answer could not be understood
  refused,       // 4xx other than 429: the request itself is wrong (not retried)
  circuit_open,  // recent failures: the source is resting
  quota)         // the source's token quota is spent

struct token_usage {
  int64_t prompt_tokens = 0;
  int64_t completion_tokens = 0;
};

class source_failure : public std::runtime_error {
 public:
  source_failure(failure_kind kind, const std::string& what, token_usage spent = {})
      : std::runtime_error(what), kind_(kind), spent_(spent) {}
  failure_kind kind() const { return kind_; }
  const token_usage& spent() const { return spent_; }

 private:
  failure_kind kind_;
  token_usage spent_;
};

inline const char* failure_kind_name(failure_kind k) { return boost::describe::enum_to_string(k, "unknown"); }

}  // namespace qf::server
