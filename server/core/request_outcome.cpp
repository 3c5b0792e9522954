// Request failures and the names of cancel reasons (see request_outcome.h).
#include "server/core/request_outcome.h"

namespace qf::server {

request_failure cancelled_because(cancel_reason why, std::string message) {
  request_failure f;
  f.what = request_failure::kind::cancelled;
  f.reason = why;
  f.message = message.empty() ? std::string(cancel_message(why)) : std::move(message);
  return f;
}

request_failure refused(request_failure::kind what, std::string message) {
  request_failure f;
  f.what = what;
  f.message = std::move(message);
  return f;
}

const char* cancel_message(cancel_reason why) {
  switch (why) {
    case cancel_reason::content_modified: return "the document changed; the request is stale";
    case cancel_reason::preempted: return "superseded by a newer request for the same document";
    case cancel_reason::shutdown: return "the server is shutting down";
    case cancel_reason::deadline: return "the request ran out of time";
    case cancel_reason::cancelled:
    case cancel_reason::none: break;
  }
  return "request cancelled";
}

const char* cancel_reason_name(cancel_reason why) {
  switch (why) {
    case cancel_reason::none: return "none";
    case cancel_reason::cancelled: return "cancelled";
    case cancel_reason::content_modified: return "content_modified";
    case cancel_reason::deadline: return "deadline";
    case cancel_reason::preempted: return "preempted";
    case cancel_reason::shutdown: return "shutdown";
  }
  return "unknown";
}

}  // namespace qf::server
