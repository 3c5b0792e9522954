// The requests a binding hands the server core, and what it gets back: plain
// C++ values, no protocol. The binding converts its messages into these (the
// cursor into a UTF-8 byte column of the snapshot that request_document()
// returned) and the answers back into messages; the policy between the two
// is the core's (server_core_requests.cpp): the deadline each request gets,
// the statistics of every completion, whether the document changed since the
// request was issued, the document's cached next edits offered with an inline
// completion, the ids of next-edit predictions.
//
// Every request is answered exactly once through its reply callback: with
// its answer, or with a request_failure (request_outcome.h). The reply runs
// on the dispatcher thread (the core's `post`), or at once on the thread that
// cancels the request (an edit, $/cancelRequest, a newer request, shutdown).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "indexing/document_store.h"
#include "server/completion/api/completion_provider.h"
#include "server/core/request_outcome.h"

namespace qf::server {

// Where a request is made: the document's snapshot (from
// server_core::request_document) and the cursor in it.
struct request_place {
  index::document_store::snapshot doc;
  text_pos cursor;  // clamped to the document
};

struct completion_call {
  std::string key;  // unique per request; server_core::cancel(key) cancels it
  request_place at;
  bool explicit_trigger = false;  // invoked by the user (else automatic while typing)
  bool inline_request = false;    // an inline completion (else a completion list)
  clock::time_point received = clock::now();
};

struct completion_answer {
  index::document_store::snapshot doc;  // the snapshot the items' positions are in
  // The candidates; for an inline completion then the document's cached next
  // edits that start on the cursor's line, widened to hold the cursor (no
  // score). Empty without a model or when the provider failed.
  completion_result result;
  bool no_model = false;
  std::optional<std::string> failed;  // the provider failed, and why; answered empty
};

struct explain_call {
  std::string key;
  request_place at;
  clock::time_point received = clock::now();
};

struct next_edit_call {
  std::string key;
  request_place at;
  clock::time_point received = clock::now();
};

struct next_edit_answer {
  index::document_store::snapshot doc;  // the snapshot the edits' positions are in
  std::string id;                       // for the acceptance reports ("next-edit-N")
  next_edit_result result;
  std::optional<std::string> reason;    // why there are no edits (no model, or the provider's reason)
};

template <class T>
using reply_fn = std::function<void(outcome<T>)>;

}  // namespace qf::server
