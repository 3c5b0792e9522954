// How a request to the server core ends when it produces no result, as a
// value the caller maps to its own protocol: the LSP binding to JSON-RPC
// errors (server/binding/lsp_errors.h), the HTTP endpoint to a status. The
// scheduler reports a cancelled job with its cancel_reason (cancelled by the
// client, superseded by a newer request, the document changed, the deadline,
// shutdown); the core adds its own refusals (a document that is not open,
// a request it cannot serve). Nothing here knows a protocol.
//
// Shared by the scheduler, the stats and the core (it includes neither).
#pragma once

#include <string>
#include <variant>

#include "inference/core/cancellation.h"

namespace qf::server {

struct request_failure {
  enum class kind {
    cancelled,    // the work was cancelled; `reason` says why (content_modified: the
                  // document changed since the request was issued)
    not_open,     // the request names a document that is not open
    unavailable,  // it cannot be served: the document is out of sync or not
                  // tracked, no model is loaded, the document is private, ...
  };
  kind what = kind::cancelled;
  cancel_reason reason = cancel_reason::none;  // kind::cancelled only
  std::string message;                         // for the client, in plain words
};

// A cancellation with cancel_message(why) (or `message` when given).
request_failure cancelled_because(cancel_reason why, std::string message = {});
request_failure refused(request_failure::kind what, std::string message);

// The result of a core request, or why there is none.
template <class T>
using outcome = std::variant<T, request_failure>;

// A cancelled request's message for the client, and the reason's name in
// stats and logs ("content_modified").
const char* cancel_message(cancel_reason why);
const char* cancel_reason_name(cancel_reason why);

}  // namespace qf::server
