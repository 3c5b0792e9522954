// How the core's request failures (server/core/request_outcome.h) read on
// the wire: the one place that maps them to JSON-RPC/LSP error codes.
//   cancelled, the document changed (content_modified)   -> ContentModified  -32801
//   cancelled otherwise (the client, a newer request that
//   superseded it, the deadline, shutdown)                -> RequestCancelled -32800
//   the document is not open                              -> InvalidParams    -32602
//   unavailable (out of sync, not tracked, no model,
//   private, nothing to explain)                          -> RequestFailed    -32803
#pragma once

#include "lsp/jsonrpc.h"
#include "server/core/request_outcome.h"

namespace qf::server {

lsp::error_code error_code_of(const request_failure& f);
// Answers `reply` with the failure's code and message.
void reply_failure(const lsp::reply_once& reply, const request_failure& f);

}  // namespace qf::server
